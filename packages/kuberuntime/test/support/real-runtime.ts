/**
 * The kuberuntime every real-node suite drives: a CRI client on a node sandbox's containerd and a
 * KubeRuntimeManager over it with the sandbox's roots.
 */
import { join } from 'node:path';
import { type CriClient, createCriClient } from '@nodeagent/cri';
import type { NodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { KubeRuntimeManager, type KubeRuntimeManagerOptions } from '../../src/index.js';

/** What {@link runtimeOn} opens on a node sandbox. */
export interface RealRuntime {
  /** The CRI client (30 s call timeout); the caller closes it. */
  readonly cri: CriClient;
  /** The options `manager` was made with: more managers over the same node can reuse them. */
  readonly options: KubeRuntimeManagerOptions;
  /** A KubeRuntimeManager with `options`. */
  readonly manager: KubeRuntimeManager;
}

/**
 * Opens a CRI client on `node` and a KubeRuntimeManager with pod logs under the sandbox's
 * `podLogRoot`, pods under `<rootDir>/pods`, no resolv.conf, and `extra` on top.
 */
export function runtimeOn(node: NodeSandbox, extra: Partial<KubeRuntimeManagerOptions> = {}): RealRuntime {
  const cri = createCriClient(node.criEndpoint, { timeoutMs: 30_000 });
  const options: KubeRuntimeManagerOptions = {
    cri,
    podLogsRoot: node.podLogRoot,
    podsRoot: join(node.rootDir, 'pods'),
    resolvConf: '',
    ...extra,
  };
  return { cri, options, manager: new KubeRuntimeManager(options) };
}
