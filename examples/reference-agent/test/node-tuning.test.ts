// The kubelet's rate, capacity, registration, runtime-call and server knobs as flags and
// `--config` fields (node-tuning-wiring.ts): each field → the same option as its flag, the
// kubelet's defaults, its validation texts (pkg/kubelet/apis/config/validation/validation.go),
// and the effects that are cheap to see on the embedded runtime.

import { createServer } from 'node:net';
import type { V1Node } from '@kubernetes/client-node';
import type { ContainerManager } from '@nodeagent/cgroups';
import { createFakeCgroupTree } from '@nodeagent/cgroups/testing';
import { noopLogger } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { readMachineInfo } from '@nodeagent/status';
import { describe, expect, it } from 'vitest';
import { runAgent } from '../src/agent.js';
import { createPodCgroups } from '../src/cgroups-wiring.js';
import { FlagError, parseFlags } from '../src/flags.js';
import { DEFAULT_NODE_TUNING, imagePullLimit, podCapacity } from '../src/node-tuning-wiring.js';
import { FAST_AGENT_TIMINGS, testLogger, waitFor } from './helpers.js';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });

const HEADER = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
const withConfig = (yaml: string, argv: readonly string[] = []) =>
  parseFlags(['--config', '/etc/kubelet/config.yaml', ...argv], 'host', () => HEADER + yaml);
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FlagError);
    return (err as Error).message;
  }
  throw new Error('expected a FlagError');
};

describe('node tuning flags and config fields', () => {
  it('defaults are the kubelet’s: kube-api 50/100, event 50/100, 50 images, no pods-per-core, register, no pids limit, 2m, serialized pulls, server on', () => {
    expect(parseFlags([], 'host').nodeTuning).toEqual({
      kubeApiQps: 50,
      kubeApiBurst: 100,
      eventQps: 50,
      eventBurst: 100,
      nodeStatusMaxImages: 50,
      podsPerCore: 0,
      registerNode: true,
      podMaxPids: -1,
      runtimeRequestTimeoutMs: 120_000,
      serializeImagePulls: true,
      maxParallelImagePulls: undefined,
      enableServer: true,
    });
    expect(DEFAULT_NODE_TUNING).toEqual(parseFlags([], 'host').nodeTuning);
  });

  it('each config field sets the same option as its flag', () => {
    const fromFile = withConfig(`
kubeAPIQPS: 15
kubeAPIBurst: 25
eventRecordQPS: 7
eventBurst: 9
nodeStatusMaxImages: -1
podsPerCore: 10
registerNode: false
podPidsLimit: 4096
runtimeRequestTimeout: 30s
serializeImagePulls: false
maxParallelImagePulls: 3
enableServer: false
`);
    const expected = {
      kubeApiQps: 15,
      kubeApiBurst: 25,
      eventQps: 7,
      eventBurst: 9,
      nodeStatusMaxImages: -1,
      podsPerCore: 10,
      registerNode: false,
      podMaxPids: 4096,
      runtimeRequestTimeoutMs: 30_000,
      serializeImagePulls: false,
      maxParallelImagePulls: 3,
      enableServer: false,
    };
    expect(fromFile.nodeTuning).toEqual(expected);
    expect(fromFile.warnings).toEqual([]);
    const fromFlags = parseFlags(
      [
        '--kube-api-qps=15',
        '--kube-api-burst',
        '25',
        '--event-qps=7',
        '--event-burst',
        '9',
        '--node-status-max-images=-1',
        '--pods-per-core=10',
        '--register-node=false',
        '--pod-max-pids=4096',
        '--runtime-request-timeout=30s',
        '--serialize-image-pulls=false',
        '--enable-server=false',
      ],
      'host',
    );
    // maxParallelImagePulls is a config field only, as in the kubelet
    expect(fromFlags.nodeTuning).toEqual({ ...expected, maxParallelImagePulls: undefined });
    // bare Go bools mean true; the command line wins over the file
    expect(parseFlags(['--register-node', '--enable-server'], 'host').nodeTuning).toMatchObject({
      registerNode: true,
      enableServer: true,
    });
    expect(withConfig('podsPerCore: 10\n', ['--pods-per-core=2']).nodeTuning.podsPerCore).toBe(2);
  });

  it('0 for the kube-api QPS or burst is kept: client-go’s RESTClientFor makes it 5 / 10, as in the kubelet', () => {
    expect(parseFlags(['--kube-api-qps=0', '--kube-api-burst=0'], 'host').nodeTuning).toMatchObject({
      kubeApiQps: 0,
      kubeApiBurst: 0,
    });
  });

  it('0 for the event QPS or burst means the default, as the kubelet’s help says', () => {
    expect(parseFlags(['--event-qps=0', '--event-burst=0'], 'host').nodeTuning).toMatchObject({
      eventQps: 50,
      eventBurst: 100,
    });
  });

  it('bad values are refused with the kubelet’s validation texts, naming the field from a file', () => {
    expect(errorOf(() => parseFlags(['--kube-api-qps=-1'], 'h'))).toBe(
      'invalid configuration: kubeAPIQPS (--kube-api-qps) -1 must not be a negative number',
    );
    expect(errorOf(() => parseFlags(['--kube-api-burst=-2'], 'h'))).toBe(
      'invalid configuration: kubeAPIBurst (--kube-api-burst) -2 must not be a negative number',
    );
    expect(errorOf(() => parseFlags(['--kube-api-qps=abc'], 'h'))).toBe(
      '--kube-api-qps: expected an integer, got "abc"',
    );
    expect(errorOf(() => withConfig('kubeAPIQPS: -5\n'))).toContain(
      'invalid configuration: kubeAPIQPS (--kube-api-qps) -5 must not be a negative number',
    );
    expect(errorOf(() => withConfig('kubeAPIBurst: "many"\n'))).toContain(
      'cannot unmarshal string into Go struct field KubeletConfiguration.kubeAPIBurst of type int32',
    );
    expect(errorOf(() => parseFlags(['--event-qps=-1'], 'h'))).toBe(
      'invalid configuration: eventRecordQPS (--event-qps) -1 must not be a negative number',
    );
    expect(errorOf(() => parseFlags(['--event-burst=-3'], 'h'))).toBe(
      'invalid configuration: eventBurst (--event-burst) -3 must not be a negative number',
    );
    expect(errorOf(() => parseFlags(['--pods-per-core=-1'], 'h'))).toBe(
      'invalid configuration: podsPerCore (--pods-per-core) -1 must not be a negative number',
    );
    expect(errorOf(() => withConfig('nodeStatusMaxImages: -2\n'))).toContain(
      'invalid value for nodeStatusMaxImages: invalid configuration: nodeStatusMaxImages (--node-status-max-images) -2 must be -1 or greater',
    );
    expect(errorOf(() => withConfig('maxParallelImagePulls: 0\n'))).toContain(
      'invalid configuration: maxParallelImagePulls 0 must be a positive number',
    );
    expect(errorOf(() => withConfig('maxParallelImagePulls: 5\n'))).toBe(
      'invalid configuration: maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false',
    );
    // the rule is checked on the merged configuration: the command line may turn serialization off
    expect(
      withConfig('maxParallelImagePulls: 5\n', ['--serialize-image-pulls=false']).nodeTuning
        .maxParallelImagePulls,
    ).toBe(5);
    expect(errorOf(() => withConfig('registerNode: "no"\n'))).toContain(
      'cannot unmarshal string into Go struct field KubeletConfiguration.registerNode of type bool',
    );
    expect(errorOf(() => withConfig('podPidsLimit: 1.5\n'))).toContain(
      'cannot unmarshal number 1.5 into Go struct field KubeletConfiguration.podPidsLimit of type int64',
    );
    expect(errorOf(() => parseFlags(['--runtime-request-timeout=0s'], 'h'))).toBe(
      '--runtime-request-timeout: expected a positive duration, got "0s"',
    );
    expect(errorOf(() => parseFlags(['--serialize-image-pulls=maybe'], 'h'))).toBe(
      '--serialize-image-pulls: expected true or false, got "maybe"',
    );
  });

  it('capacity pods = min(maxPods, podsPerCore × cores) as the kubelet’s MachineInfo setter; pull limit', () => {
    expect(podCapacity(110, 10, 4)).toBe(40);
    expect(podCapacity(20, 10, 4)).toBe(20);
    expect(podCapacity(110, 0, 4)).toBe(110);
    expect(imagePullLimit({ serializeImagePulls: true, maxParallelImagePulls: undefined })).toBe(1);
    expect(imagePullLimit({ serializeImagePulls: false, maxParallelImagePulls: 3 })).toBe(3);
    expect(imagePullLimit({ serializeImagePulls: false, maxParallelImagePulls: undefined })).toBeUndefined();
  });
});

describe('node tuning effects', () => {
  it('--pod-max-pids sets pids.max of each pod cgroup (fake cgroup v2 tree)', async () => {
    const tree = createFakeCgroupTree({ version: 2 });
    try {
      const make = (podPidsLimit: number | undefined) =>
        createPodCgroups({
          flags: { cgroupRoot: '/' },
          realRuntime: true,
          machine: readMachineInfo(),
          kubeReserved: undefined,
          systemReserved: undefined,
          activePods: () => [],
          podPidsLimit,
          overrides: {
            cgroupMountRoot: tree.mountRoot,
            fs: tree.fs,
            procRoot: tree.procRoot,
            sysRoot: tree.sysRoot,
          },
          clock: new FakeClock(),
          logger: noopLogger,
        }) as ContainerManager;
      const cgroups = make(4096);
      await cgroups.start();
      const pod = {
        metadata: { name: 'p', namespace: 'default', uid: 'pids-uid' },
        spec: { containers: [{ name: 'app', resources: {} }] },
      };
      cgroups.ensurePodCgroup(pod);
      expect(tree.read('kubepods/besteffort/podpids-uid/pids.max')).toBe('4096');
      await cgroups.stop();
    } finally {
      tree.remove();
    }
  });

  it('embedded agent: capacity pods from --pods-per-core, status.images capped, no kubelet API with --enable-server=false', async () => {
    const machine = { ...readMachineInfo(), cpus: 3 };
    const healthzPort = await freePort();
    const agent = await runAgent({
      nodeName: 'tuning-node',
      machine,
      maxPods: 110,
      kubeletServer: {
        address: '127.0.0.1',
        port: 0,
        readOnlyPort: 0,
        healthzPort,
        healthzBindAddress: '127.0.0.1',
        tlsCertFile: undefined,
        tlsPrivateKeyFile: undefined,
        clientCaFile: undefined,
        authenticationTokenWebhook: false,
        anonymousAuth: true,
        authorizationMode: 'AlwaysAllow',
      },
      nodeTuning: { podsPerCore: 2, nodeStatusMaxImages: 1, enableServer: false },
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
    try {
      const store = agent.apiServer?.store;
      const node = await waitFor('the Node with images', () => {
        const n = store?.tryGet('nodes', '', 'tuning-node') as V1Node | undefined;
        return (n?.status?.images?.length ?? 0) > 0 ? n : undefined;
      });
      expect(node.status?.capacity?.pods).toBe('6');
      expect((await agent.cri.image.listImages({})).images.length).toBeGreaterThan(1);
      expect(node.status?.images).toHaveLength(1);
      expect(() => agent.kubeletServer?.url).toThrow('the main server is not listening');
      expect(await (await fetch(`${agent.kubeletServer?.healthzUrl}/healthz`)).text()).toBe('ok');
      // daemonEndpoints still names the configured port, as the kubelet's
      expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(0);
    } finally {
      await agent.stop();
    }
  }, 60_000);

  it('embedded agent with --register-node=false: no Node is created; one an administrator makes gets its status', async () => {
    const agent = await runAgent({
      nodeName: 'unregistered-node',
      nodeTuning: { registerNode: false },
      ...FAST_AGENT_TIMINGS,
      logger: testLogger(),
    });
    try {
      const store = agent.apiServer?.store;
      if (store === undefined) throw new Error('no embedded API server');
      await new Promise((r) => setTimeout(r, 1_000));
      expect(store.tryGet('nodes', '', 'unregistered-node')).toBeUndefined();
      store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'unregistered-node' } });
      const node = await waitFor(
        'the status on the administrator’s Node',
        () => {
          const n = store.tryGet('nodes', '', 'unregistered-node') as V1Node | undefined;
          return n?.status?.conditions?.some((c) => c.type === 'Ready') ? n : undefined;
        },
        20_000,
      );
      expect(node.status?.capacity?.pods).toBe('110');
      // registration would have added the default labels; without it they are not there
      expect(node.metadata?.labels?.['kubernetes.io/hostname']).toBeUndefined();
    } finally {
      await agent.stop();
    }
  }, 60_000);
});
