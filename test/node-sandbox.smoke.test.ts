import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CriClient, connectCri } from '@nodeagent/test-support/cri-grpc';
import { listLeakedNetns } from '@nodeagent/test-support/netns';
import {
  cleanupStaleNodeSandboxes,
  type NodeSandbox,
  startNodeSandbox,
} from '@nodeagent/test-support/node-sandbox';
import { findProcessesWithArg } from '@nodeagent/test-support/procfs';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';

const PREFIX = 'smokesbx';

interface PodStatus {
  status: { state: string; network: { ip: string } };
}

describeRealNode('node sandbox: containerd + CNI in a netns', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    const t0 = Date.now();
    node = await startNodeSandbox({ name: PREFIX });
    timings.startMs = Date.now() - t0;
    cri = await connectCri(node.criEndpoint);
  });

  afterAll(async () => {
    cri?.close();
    // Normally the last test already stopped it; stop() is idempotent and still cleans up after a failure.
    await node?.stop();
    console.log(`node sandbox timings (ms): ${JSON.stringify(timings)}`);
  });

  it('answers CRI Version as containerd v1', async () => {
    const v = await cri.runtime<{ runtime_name: string; runtime_api_version: string }>('Version', {
      version: 'v1',
    });
    expect(v.runtime_name).toBe('containerd');
    expect(v.runtime_api_version).toBe('v1');
  });

  it('has the busybox image in the CRI image store', async () => {
    const res = await cri.image<{ image: { repo_tags: string[] } | null }>('ImageStatus', {
      image: { image: node.imageRef },
    });
    expect(res.image?.repo_tags).toContain(node.imageRef);
  });

  it('runs a pod whose container serves HTTP on its pod IP', async () => {
    const t0 = Date.now();
    const config = {
      metadata: { name: 'web', uid: 'uid-web-1', namespace: 'default', attempt: 0 },
      hostname: 'web',
      log_directory: `${node.podLogRoot}/default_web_uid-web-1`,
      labels: { app: 'web' },
      linux: { security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    };
    const { pod_sandbox_id: podId } = await cri.runtime<{ pod_sandbox_id: string }>('RunPodSandbox', {
      config,
    });
    const { container_id: ctrId } = await cri.runtime<{ container_id: string }>('CreateContainer', {
      pod_sandbox_id: podId,
      sandbox_config: config,
      config: {
        metadata: { name: 'httpd', attempt: 0 },
        image: { image: node.imageRef },
        command: [
          'sh',
          '-c',
          'mkdir -p /www && echo hello > /www/index.html && exec httpd -f -p 8080 -h /www',
        ],
        log_path: 'httpd/0.log',
        linux: { security_context: {} },
      },
    });
    await cri.runtime('StartContainer', { container_id: ctrId });
    timings.podStartMs = Date.now() - t0;

    const status = await cri.runtime<PodStatus>('PodSandboxStatus', { pod_sandbox_id: podId });
    expect(status.status.state).toBe('SANDBOX_READY');
    const podIp = status.status.network.ip;
    expect(podIp).toMatch(new RegExp(`^${node.podCidr.split('.').slice(0, 3).join('\\.')}\\.\\d+$`));

    // httpd may need a moment after StartContainer: retry briefly. (No `wget -T`: the host's
    // static busybox 1.35 wget segfaults with it; the process timeout bounds each try instead.)
    let body = '';
    let lastError = '';
    for (let i = 0; i < 50 && body !== 'hello\n'; i++) {
      const r = await node.run(['busybox', 'wget', '-qO-', `http://${podIp}:8080/`], { timeoutMs: 5_000 });
      body = r.stdout;
      lastError = r.stderr;
      if (body !== 'hello\n') await new Promise((r) => setTimeout(r, 100));
    }
    if (body !== 'hello\n') {
      const st = await cri.runtime('ContainerStatus', { container_id: ctrId, verbose: true });
      const links = await node.run(['ip', '-br', 'addr']);
      throw new Error(`no HTTP answer from ${podIp}: ${lastError}\n${JSON.stringify(st)}\n${links.stdout}`);
    }
    expect(body).toBe('hello\n');
  });

  it('stops without leaving processes, namespaces, mounts or files behind', async () => {
    const { rootDir, containerdPid } = node;
    const t0 = Date.now();
    await node.stop();
    timings.stopMs = Date.now() - t0;
    await node.stop(); // idempotent
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
    expect(findProcessesWithArg(rootDir, true)).toEqual([]); // containerd (--config) and shims (-address)
    expect(existsSync(`/proc/${containerdPid}`)).toBe(false);
    expect(existsSync(rootDir)).toBe(false);
  });
});

describeRealNode('node sandbox: teardown after a crash', NODE_SANDBOX_REQUIREMENTS, () => {
  it('cleans up running pods, shims and mounts even when containerd was SIGKILLed', async () => {
    const node = await startNodeSandbox({ name: PREFIX });
    const cri = await connectCri(node.criEndpoint);
    try {
      const config = {
        metadata: { name: 'sleeper', uid: 'uid-sleeper-1', namespace: 'default', attempt: 0 },
        log_directory: `${node.podLogRoot}/sleeper`,
        linux: {},
      };
      const { pod_sandbox_id: podId } = await cri.runtime<{ pod_sandbox_id: string }>('RunPodSandbox', {
        config,
      });
      const { container_id: ctrId } = await cri.runtime<{ container_id: string }>('CreateContainer', {
        pod_sandbox_id: podId,
        sandbox_config: config,
        config: { metadata: { name: 'sleep' }, image: { image: node.imageRef }, command: ['sleep', '600'] },
      });
      await cri.runtime('StartContainer', { container_id: ctrId });
      const shims = findProcessesWithArg(node.criSocketPath);
      expect(shims.length).toBeGreaterThan(0);
      process.kill(node.containerdPid, 'SIGKILL');
    } finally {
      cri.close();
    }
    await node.stop();
    expect(findProcessesWithArg(node.rootDir, true)).toEqual([]);
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
    expect(existsSync(node.rootDir)).toBe(false);
  });
});

describeRealNode('node sandbox: cleanup of sandboxes whose owner died', NODE_SANDBOX_REQUIREMENTS, () => {
  it('cleanupStaleNodeSandboxes tears down a live sandbox whose owner PID is gone, and only that', async () => {
    const live = await startNodeSandbox({ name: PREFIX });
    const orphan = await startNodeSandbox({ name: PREFIX });
    try {
      const cri = await connectCri(orphan.criEndpoint);
      const config = { metadata: { name: 'p', uid: 'uid-p', namespace: 'default' }, linux: {} };
      await cri.runtime('RunPodSandbox', { config });
      cri.close();
      // Pretend the orphan's owner died: point owner.json at a PID that has exited.
      const deadPid = spawnSync('true').pid;
      writeFileSync(
        join(orphan.rootDir, 'owner.json'),
        JSON.stringify({ ownerPid: deadPid, netnsName: orphan.netns.name }),
      );

      expect(await cleanupStaleNodeSandboxes()).toEqual([orphan.rootDir]);
      expect(findProcessesWithArg(orphan.rootDir, true)).toEqual([]);
      expect(existsSync(orphan.rootDir)).toBe(false);
      expect(existsSync(orphan.netns.path)).toBe(false);
      // The sandbox of this (live) process is untouched.
      expect(existsSync(live.rootDir)).toBe(true);
      expect(findProcessesWithArg(live.rootDir, true).length).toBeGreaterThan(0); // its containerd
    } finally {
      await orphan.stop(); // still safe after an external cleanup
      await live.stop();
    }
    expect(await listLeakedNetns(PREFIX)).toEqual([]);
  });
});
