// Container log rotation against a real containerd: a chatty container's log stays bounded
// by containerLogMaxFiles × containerLogMaxSize while it writes far more, ReopenContainerLog
// makes containerd write to a fresh live log after each rotation, and no line is lost between
// the files kept (the history reader sees consecutive line numbers).
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { CriClient } from '@nodeagent/cri';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode, NODE_SANDBOX_REQUIREMENTS } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContainerLogManager, type KubeRuntimeManager, readContainerLogHistory } from '../src/index.js';
import { runtimeOn } from './support/real-runtime.js';

describeRealNode('container log rotation on a real containerd', NODE_SANDBOX_REQUIREMENTS, () => {
  let node: NodeSandbox;
  let cri: CriClient;
  let manager: KubeRuntimeManager;

  beforeAll(async () => {
    node = await startNodeSandbox({ name: 'logrot' });
    ({ cri, manager } = runtimeOn(node));
  });
  afterAll(async () => {
    cri?.close();
    await node?.stop();
  });

  it('keeps a chatty container log bounded and loses no line between the kept files', async () => {
    // ~20 lines of 100 bytes every 10 ms: about 200 KB/s.
    const script =
      'i=0; pad=$(printf "%080d" 0); while true; do j=0; while [ $j -lt 20 ]; do echo "n=$i $pad"; i=$((i+1)); j=$((j+1)); done; sleep 0.01; done';
    const pod: V1Pod = {
      metadata: { name: 'chatty', namespace: 'logs', uid: `chatty-${process.pid}` },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'chatty',
            image: node.imageRef,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', script],
          },
        ],
      },
    };
    const result = await manager.syncPod(pod, await manager.getPodStatus(pod));
    expect(result.error()).toBeUndefined();
    const status = await manager.getPodStatus(pod);
    const id = status.containerStatuses[0]?.id ?? '';
    const logPath = (await cri.runtime.containerStatus({ containerId: id })).status?.logPath ?? '';
    expect(logPath).not.toBe('');

    const maxSize = 64 * 1024;
    const maxFiles = 5;
    const logs = new ContainerLogManager({
      runtime: cri.runtime,
      containerLogMaxSize: maxSize,
      containerLogMaxFiles: maxFiles,
    });
    const dirBytes = async (): Promise<{ files: string[]; bytes: number }> => {
      const files = (await readdir(dirname(logPath))).filter(
        (f) => f.startsWith('0.log') || f.includes('.log'),
      );
      let bytes = 0;
      for (const f of files) bytes += (await stat(join(dirname(logPath), f)).catch(() => ({ size: 0 }))).size;
      return { files, bytes };
    };
    let maxSeen = 0;
    let rotations = 0;
    // Checks 1 s apart at least: rotated names have a one-second resolution (the kubelet's
    // interval is at least 3 s), so two rotations within a second would share a name.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const before = (await stat(logPath)).size;
      await logs.rotateLogs();
      const after = await stat(logPath).catch(() => undefined);
      // Rotated: the live log is a new, smaller file the runtime writes to again.
      if (before >= maxSize && after !== undefined && after.size < before) rotations++;
      const { files, bytes } = await dirBytes();
      maxSeen = Math.max(maxSeen, bytes);
      expect(files.length).toBeLessThanOrEqual(maxFiles);
      await new Promise((r) => setTimeout(r, 1100));
    }
    // The runtime still writes to the reopened live log.
    const sizeNow = (await stat(logPath)).size;
    await new Promise((r) => setTimeout(r, 300));
    expect((await stat(logPath)).size).toBeGreaterThan(sizeNow);
    expect(rotations).toBeGreaterThanOrEqual(5);

    const numbers: number[] = [];
    for await (const e of readContainerLogHistory(logPath)) {
      const m = /^n=(\d+) /.exec(e.content);
      if (m) numbers.push(Number(m[1]));
    }
    const last = numbers[numbers.length - 1] ?? 0;
    const written = last * 100;
    // It wrote several times what is kept; what is kept stays within the files' bound (each
    // file is at most the size plus what arrives between two checks, ~220 KB at 200 KB/s).
    expect(written).toBeGreaterThan(3 * maxSeen);
    expect(maxSeen).toBeLessThan(maxFiles * (maxSize + 300 * 1024));
    // No line lost between the files kept: consecutive numbers from the oldest kept one.
    const first = numbers[0] ?? 0;
    const gap = numbers.findIndex((n, i) => n !== first + i);
    expect(gap === -1 ? 'none' : numbers.slice(Math.max(0, gap - 2), gap + 2)).toBe('none');
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => first + i));
    await manager.killPod(pod, await manager.getPodStatus(pod));
  }, 60_000);
});
