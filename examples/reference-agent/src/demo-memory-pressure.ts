/**
 * Simulated node memory pressure for the embedded demo, touching nothing real on the machine:
 *
 * - {@link SimulatedMemoryAllocations} makes a container of the in-process fake runtime whose
 *   script contains the shell idiom `head -c <N>m /dev/zero | tail` (which on a real busybox
 *   makes `tail` hold N MiB) report a working set of N MiB in its CRI stats while it runs;
 * - {@link SimulatedNodeMemory} wraps the agent's Summary so the node has a fixed simulated
 *   memory ({@link DEMO_NODE_MEMORY_BYTES}): `node.memory.availableBytes` = that − the pods'
 *   working sets. The eviction manager's `memory.available` signal reads it, so the demo's
 *   BestEffort {@link demoMemoryHogPod} drives the node below the kubelet's default hard
 *   threshold (`memory.available<100Mi`), is evicted (`Failed`, `Evicted`, upstream's message),
 *   the Node reports `MemoryPressure`, and recovers once the hog is gone.
 *
 * @module
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodeagent/core';
import { type ContainerEventResponse, ContainerEventType } from '@nodeagent/cri';
import type { FakeRuntime } from '@nodeagent/cri/testing';
import type { KubeObject, SharedInformerFactory } from '@nodeagent/informer';
import type { Summary, SummaryProvider } from '@nodeagent/stats';
import { containerScript } from './embedded-runtime.js';

const Mi = 1024 * 1024;

/** The simulated node memory of the embedded demo: 1 GiB. */
export const DEMO_NODE_MEMORY_BYTES = 1024 * Mi;

/** What the demo's memory hog "allocates": leaves less than the default 100Mi threshold. */
export const DEMO_HOG_MEBIBYTES = 980;

/** The demo's `--eviction-pressure-transition-period` when none is given (the kubelet's 5m is long for a demo), ms. */
export const DEMO_PRESSURE_TRANSITION_PERIOD_MS = 20_000;

const ALLOCATION = /head -c (\d+)([kKmMgG]?) \/dev\/zero \| tail\b/;

/** The bytes `script` holds with `head -c <N>[k|m|g] /dev/zero | tail`, or undefined. */
export function simulatedAllocationBytes(script: string): number | undefined {
  const m = ALLOCATION.exec(script);
  if (m === null) return undefined;
  const unit = { '': 1, k: 1024, m: Mi, g: 1024 * Mi }[(m[2] ?? '').toLowerCase()] ?? 1;
  return Number(m[1]) * unit;
}

/** Sets the fake runtime's working set of containers that "allocate" memory, as they start. */
export class SimulatedMemoryAllocations {
  readonly #runtime: FakeRuntime;
  readonly #logger: Logger;
  #unsubscribe: (() => void) | undefined;

  /** @param runtime the embedded fake runtime; @param logger where allocations are logged. */
  constructor(runtime: FakeRuntime, logger: Logger) {
    this.#runtime = runtime;
    this.#logger = logger;
  }

  /** Follows the runtime's container starts from now on. */
  start(): void {
    this.#unsubscribe ??= this.#runtime.onContainerEvent((e) => this.#onEvent(e));
  }

  /** Stops following. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  #onEvent(e: ContainerEventResponse): void {
    if (e.containerEventType !== ContainerEventType.CONTAINER_STARTED_EVENT) return;
    const script = containerScript(this.#runtime, e.containerId)?.script;
    const bytes = script === undefined ? undefined : simulatedAllocationBytes(script);
    if (bytes === undefined) return;
    this.#runtime.setContainerUsage(e.containerId, { memoryWorkingSetBytes: bytes });
    this.#logger.info({ containerId: e.containerId, bytes }, 'Simulated memory allocation');
  }
}

/** The pods' working sets in `summary` (a pod's own figure, else its containers'). */
function podsWorkingSet(summary: Summary): number {
  let total = 0;
  for (const p of summary.pods) {
    total +=
      p.memory?.workingSetBytes ?? p.containers.reduce((n, c) => n + (c.memory?.workingSetBytes ?? 0), 0);
  }
  return total;
}

/** A Summary whose node memory is `capacityBytes` used only by the pods. */
export class SimulatedNodeMemory implements SummaryProvider {
  readonly #inner: SummaryProvider;
  readonly #capacityBytes: number;

  /** @param inner the agent's Summary; @param capacityBytes the simulated node memory. */
  constructor(inner: SummaryProvider, capacityBytes: number) {
    this.#inner = inner;
    this.#capacityBytes = capacityBytes;
  }

  /**
   * The inner Summary with the simulated node memory. It ignores a scope of `{ pods: false }`:
   * that memory is the pods' working set, so the pods are always read.
   */
  async get(updateStats: boolean): Promise<Summary> {
    return this.#rewrite(await this.#inner.get(updateStats));
  }

  /** The inner CPU-and-memory Summary with the simulated node memory. */
  async getCpuAndMemory(): Promise<Summary> {
    const inner = this.#inner.getCpuAndMemory
      ? await this.#inner.getCpuAndMemory()
      : await this.#inner.get(false);
    return this.#rewrite(inner);
  }

  #rewrite(summary: Summary): Summary {
    const used = podsWorkingSet(summary);
    const time = summary.node.memory?.time ?? new Date().toISOString();
    return {
      ...summary,
      node: {
        ...summary.node,
        memory: {
          time,
          availableBytes: Math.max(0, this.#capacityBytes - used),
          usageBytes: used,
          workingSetBytes: used,
        },
      },
    };
  }
}

/** The demo's BestEffort pod that "allocates" {@link DEMO_HOG_MEBIBYTES} MiB: evicted under the simulated pressure. */
export function demoMemoryHogPod(nodeName: string, image: string, namespace: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'memory-hog',
      namespace,
      labels: { 'app.kubernetes.io/part-of': 'nodeagent-demo', app: 'memory-hog' },
    },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 5,
      // No requests or limits: BestEffort, the first the kubelet evicts.
      containers: [
        {
          name: 'hog',
          image,
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            `echo allocating ${DEMO_HOG_MEBIBYTES}Mi; head -c ${DEMO_HOG_MEBIBYTES}m /dev/zero | tail`,
          ],
        },
      ],
    },
  };
}

/** One line about the node's pressure conditions, e.g. `node n MemoryPressure=True (KubeletHasInsufficientMemory)`. */
export function nodePressureSummary(node: V1Node): string {
  const parts = ['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => {
    const c = node.status?.conditions?.find((x) => x.type === type);
    return `${type}=${c?.status ?? 'Unknown'}${c?.status === 'True' ? ` (${c.reason ?? ''})` : ''}`;
  });
  return `node ${node.metadata?.name ?? ''} ${parts.join(' ')}`;
}

/** Prints a line whenever the node's pressure conditions change, until the factory shuts down. */
export function watchDemoNodePressure(
  factory: SharedInformerFactory,
  nodeName: string,
  write: (line: string) => void,
): void {
  let last = '';
  const emit = (node: V1Node) => {
    const line = nodePressureSummary(node);
    if (line === last) return;
    last = line;
    write(`[demo] ${line}`);
  };
  factory.nodes<V1Node & KubeObject>({ fieldSelector: `metadata.name=${nodeName}` }).addEventHandler({
    onAdd: emit,
    onUpdate: (_old, node) => emit(node),
  });
}
