/**
 * Node registration and status (upstream `kubelet_node_status.go`): create the Node — or
 * reconcile the default labels of one that exists — retrying with backoff, then every
 * `nodeStatusUpdateFrequency` compute the status (conditions, capacity, allocatable,
 * addresses, nodeInfo, daemon endpoints, images) and PATCH it when it changed or
 * `nodeStatusReportFrequency` passed, with up to 5 immediate tries.
 *
 * @module
 */
import type { V1Node, V1NodeCondition, V1NodeStatus, V1Taint } from '@kubernetes/client-node';
import {
  Backoff,
  type Clock,
  type Lifecycle,
  type Logger,
  noopLogger,
  realClock,
  StartOnce,
  type Timer,
} from '@nodeagent/core';
import { DEFAULT_MAX_PODS, nodeAllocatable, nodeCapacity } from './allocatable.js';
import { apiErrorCode, errorMessage, type StatusApi } from './api.js';
import { type MachineInfo, readMachineInfo } from './machine-info.js';
import { countedCall, type StatusMetrics, statusMetrics } from './metrics.js';
import { NODE_CONDITION_EVENTS, noNodePressure } from './node-conditions.js';
import {
  DEFAULT_NODE_STATUS_MAX_IMAGES,
  defaultLabelsToReconcile,
  defaultNodeLabels,
  nodeAddresses,
  nodeImages,
  nodeSystemInfo,
} from './node-object.js';
import { computeNodeStatus, nodeStatusChanged } from './node-status-compute.js';
import type { NodeStatusManagerOptions } from './node-status-manager-options.js';
import { compactJson } from './pod-status-normalize.js';
import { twoWayMergePatch } from './pod-status-patch.js';
import { rfc3339Seconds } from './time.js';

/** The kubelet version reported by default. */
export const DEFAULT_KUBELET_VERSION = 'v1.36.0-nodeagent';
/** Upstream `nodeReadyGracePeriod`: how long the fast status updates at startup go on, ms. */
export const NODE_READY_GRACE_PERIOD_MS = 120_000;
/** Period of the fast status updates at startup, ms. */
export const FAST_STATUS_UPDATE_PERIOD_MS = 100;
/** Upstream `nodeStatusUpdateRetry`. */
export const NODE_STATUS_UPDATE_RETRY = 5;
const NODE_STATUS_MERGE_KEYS = { conditions: 'type', addresses: 'type' };

/** Registers the Node and keeps its status current. */
export class NodeStatusManager implements Lifecycle {
  readonly #once = new StartOnce('NodeStatusManager');
  readonly #stopping = new AbortController();
  readonly #options: NodeStatusManagerOptions;
  readonly #api: StatusApi;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: StatusMetrics;
  readonly #path: string;
  #machine: MachineInfo | undefined;
  #timer: Timer | undefined;
  #fastTimer: Timer | undefined;
  #inFlight: Promise<void> | undefined;
  #node: V1Node | undefined;
  #lastReportAtMs: number | undefined;
  #runtimeVersion = '';
  /** The Node's UID once registered. */
  nodeUid: string | undefined;
  /** Status patches sent successfully. */
  posts = 0;

  /** @param options see {@link NodeStatusManagerOptions}. */
  constructor(options: NodeStatusManagerOptions) {
    const every = options.statusUpdateFrequencyMs ?? 10_000;
    if (!(every >= 1))
      throw new RangeError(`NodeStatusManager: statusUpdateFrequencyMs must be >= 1, got ${every}`);
    const maxPods = options.maxPods ?? DEFAULT_MAX_PODS;
    if (!Number.isInteger(maxPods) || maxPods < 1)
      throw new RangeError(`NodeStatusManager: maxPods must be an integer >= 1, got ${maxPods}`);
    this.#options = options;
    this.#api = options.api;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'node-status' });
    this.#metrics = statusMetrics(options.metrics);
    this.#path = `/api/v1/nodes/${options.nodeName}`;
    this.#machine = options.machine;
  }

  /** The Node as last read or written. */
  get node(): V1Node | undefined {
    return this.#node;
  }

  /** The Ready condition last posted. */
  get ready(): V1NodeCondition | undefined {
    return this.#node?.status?.conditions?.find((c) => c.type === 'Ready');
  }

  get #hostname(): string {
    return this.#options.hostname ?? this.#options.nodeName;
  }

  #machineInfo(): MachineInfo {
    this.#machine ??= readMachineInfo();
    return this.#machine;
  }

  /**
   * Registers the Node (retrying with backoff until it succeeds or {@link NodeStatusManager.stop};
   * skipped with `registerNode: false`), posts the first status, then updates it every `statusUpdateFrequencyMs`. `signal` bounds
   * the registration and the first post only. A second call rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        if (this.#options.registerNode !== false) await this.register(this.#stopping.signal);
        await this.updateNodeStatus();
        if (this.#stopping.signal.aborted) return;
        this.#timer = this.#clock.setInterval(
          () => void this.updateNodeStatus(),
          this.#options.statusUpdateFrequencyMs ?? 10_000,
        );
        this.#startFastStatusUpdates();
      },
      () => this.stop(),
    );
  }

  /** Stops registering and updating and waits for an update in flight. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#fastTimer?.cancel();
    this.#fastTimer = undefined;
    await this.#inFlight;
  }

  /**
   * Upstream `fastStatusUpdateOnce`: until the Node is Ready, recompute every 100 ms and post
   * as soon as the status changed, so Ready shows up without waiting for the next 10 s tick;
   * gives up after `nodeReadyGracePeriod` (120 s).
   */
  #startFastStatusUpdates(): void {
    const startedMs = this.#clock.now();
    const tick = () => {
      if (this.#stopping.signal.aborted || this.ready?.status === 'True') return;
      if (this.#clock.now() - startedMs >= NODE_READY_GRACE_PERIOD_MS) {
        this.#log.error({ node: this.#options.nodeName }, 'Node not becoming ready in time after startup');
        return;
      }
      void this.updateNodeStatus().then(() => {
        if (!this.#stopping.signal.aborted)
          this.#fastTimer = this.#clock.setTimeout(tick, FAST_STATUS_UPDATE_PERIOD_MS);
      });
    };
    this.#fastTimer = this.#clock.setTimeout(tick, FAST_STATUS_UPDATE_PERIOD_MS);
  }

  /** The Node to create (upstream `initialNode`). */
  initialNode(): V1Node {
    const o = this.#options;
    const machine = this.#machineInfo();
    const taints: V1Taint[] = [...(o.registerWithTaints ?? [])];
    if (
      o.registerSchedulable === false &&
      !taints.some((t) => t.key === 'node.kubernetes.io/unschedulable')
    ) {
      taints.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
    }
    const capacity = nodeCapacity(machine, o.maxPods ?? DEFAULT_MAX_PODS);
    const spec: V1Node['spec'] = {};
    if (taints.length > 0) spec.taints = taints;
    if (o.podCidrs !== undefined && o.podCidrs.length > 0) {
      spec.podCIDR = o.podCidrs[0] as string;
      spec.podCIDRs = [...o.podCidrs];
    }
    if (o.registerSchedulable === false) spec.unschedulable = true;
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: o.nodeName,
        labels: { ...(o.nodeLabels ?? {}), ...defaultNodeLabels(this.#hostname, machine) },
      },
      spec,
      status: {
        capacity,
        allocatable: nodeAllocatable(capacity, this.#reservations()),
        addresses: nodeAddresses(o.nodeIps ?? [], machine.internalIp, this.#hostname),
      },
    };
  }

  #reservations() {
    const o = this.#options;
    return {
      ...(o.kubeReserved ? { kubeReserved: o.kubeReserved } : {}),
      ...(o.systemReserved ? { systemReserved: o.systemReserved } : {}),
      ...(o.evictionHard ? { evictionHard: o.evictionHard } : {}),
    };
  }

  /** Creates the Node, or reconciles the default labels of an existing one; retries 200 ms, 400 ms, … 7 s apart. */
  async register(signal: AbortSignal): Promise<void> {
    // Upstream sleeps 100 ms, then doubles before each attempt (capped at 7 s): attempts are 200 ms,
    // 400 ms, ... apart. The first attempt goes at once here.
    const backoff = new Backoff({ initialMs: 200, capMs: 7_000, jitter: 0, clock: this.#clock });
    const node = this.initialNode();
    for (;;) {
      try {
        await this.#tryRegister(node, signal);
        return;
      } catch (err) {
        if (signal.aborted) throw err;
        this.#log.warn(
          { node: this.#options.nodeName, err: errorMessage(err) },
          'Unable to register node with API server',
        );
        await backoff.sleep(signal);
      }
    }
  }

  async #tryRegister(node: V1Node, signal: AbortSignal): Promise<void> {
    try {
      this.#node = await countedCall(this.#metrics, 'nodes', 'create', () =>
        this.#api.create<V1Node>('/api/v1/nodes', node, signal),
      );
      this.nodeUid = this.#node.metadata?.uid;
      this.#log.info({ node: this.#options.nodeName }, 'Successfully registered node');
      return;
    } catch (err) {
      if (apiErrorCode(err) !== 409) throw err;
    }
    const existing = await countedCall(this.#metrics, 'nodes', 'get', () =>
      this.#api.get<V1Node>(this.#path, signal),
    );
    if (existing === undefined)
      throw new Error(`node ${this.#options.nodeName} already exists but could not be read`);
    this.#node = existing;
    this.nodeUid = existing.metadata?.uid;
    const labels = defaultLabelsToReconcile(defaultNodeLabels(this.#hostname, this.#machineInfo()), existing);
    if (Object.keys(labels).length > 0) {
      this.#node = await countedCall(this.#metrics, 'nodes', 'patch', () =>
        this.#api.patch<V1Node>(this.#path, 'strategic', { metadata: { labels } }, signal),
      );
    }
    this.#log.info(
      { node: this.#options.nodeName, reconciledLabels: Object.keys(labels) },
      'Node was previously registered',
    );
  }

  /** One tick (upstream `updateNodeStatus`): up to 5 tries; never throws. */
  updateNodeStatus(): Promise<void> {
    this.#inFlight ??= (async () => {
      for (let i = 0; i < NODE_STATUS_UPDATE_RETRY && !this.#stopping.signal.aborted; i++) {
        try {
          await this.#tryUpdateNodeStatus(i);
          return;
        } catch (err) {
          this.#log.warn(
            { attempt: i + 1, err: errorMessage(err) },
            'Error updating node status, will retry',
          );
        }
      }
      if (!this.#stopping.signal.aborted)
        this.#log.warn({}, 'Unable to update node status: update node status exceeds retry count');
    })().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /** The status to post, computed over `original` at `nowMs`. */
  async computeStatus(original: V1Node, nowMs: number): Promise<V1NodeStatus> {
    const o = this.#options;
    const machine = this.#machineInfo();
    if (this.#runtimeVersion === '' && o.runtimeVersion) {
      this.#runtimeVersion = await Promise.resolve()
        .then(() => o.runtimeVersion?.() ?? '')
        .catch(() => '');
    }
    const readinessErrors = await Promise.resolve()
      .then(() => o.readiness?.() ?? [])
      .catch(() => ['container runtime is down']);
    const previous = new Map((original.status?.conditions ?? []).map((c) => [c.type, c]));
    const pressure = o.pressure ?? noNodePressure;
    // A failed image listing leaves the images the Node has (upstream's setter returns early).
    const listed = await Promise.resolve()
      .then(() => o.images?.() ?? [])
      .catch((err: unknown) => {
        this.#log.warn({ err: errorMessage(err) }, 'Error getting image list');
        return undefined;
      });
    return computeNodeStatus({
      original: original.status,
      now: rfc3339Seconds(nowMs),
      capacity: nodeCapacity(machine, o.maxPods ?? DEFAULT_MAX_PODS),
      reservations: this.#reservations(),
      readinessErrors,
      pressure: {
        memory: this.#pressure(() => pressure.isUnderMemoryPressure(), previous.get('MemoryPressure')),
        disk: this.#pressure(() => pressure.isUnderDiskPressure(), previous.get('DiskPressure')),
        pid: this.#pressure(() => pressure.isUnderPIDPressure(), previous.get('PIDPressure')),
      },
      images:
        listed === undefined ? undefined : nodeImages(listed, o.maxImages ?? DEFAULT_NODE_STATUS_MAX_IMAGES),
      addresses: nodeAddresses(o.nodeIps ?? [], machine.internalIp, this.#hostname),
      kubeletPort: o.kubeletPort ?? 10250,
      nodeInfo: nodeSystemInfo(machine, this.#runtimeVersion, o.kubeletVersion ?? DEFAULT_KUBELET_VERSION),
    });
  }

  #recordConditionEvents(before: readonly V1NodeCondition[], after: readonly V1NodeCondition[]): void {
    const record = this.#options.recordEvent;
    if (record === undefined) return;
    for (const c of after) {
      const reasons = NODE_CONDITION_EVENTS[c.type];
      if (reasons === undefined || (c.status !== 'True' && c.status !== 'False')) continue;
      const was = before.find((b) => b.type === c.type);
      if (was?.status === c.status) continue;
      // Upstream's Ready setter records only a flip of an existing condition; the pressure
      // setters start a new condition as Unknown, so its first False/True is recorded.
      if (c.type === 'Ready' && was === undefined) continue;
      const reason = reasons[c.status];
      try {
        record('Normal', reason, `Node ${this.#options.nodeName} status is now: ${reason}`);
      } catch (err) {
        this.#log.warn({ err: errorMessage(err), reason }, 'Event recorder failed');
      }
    }
  }

  /** A pressure reading; a provider that throws keeps the condition as it was. */
  #pressure(read: () => boolean, previous: V1NodeCondition | undefined): boolean {
    try {
      return read();
    } catch (err) {
      this.#log.warn({ err: errorMessage(err) }, 'Node pressure provider failed; keeping the condition');
      return previous?.status === 'True';
    }
  }

  async #tryUpdateNodeStatus(attempt: number): Promise<void> {
    let original = this.#node;
    if (original === undefined || attempt > 0) {
      original = await countedCall(this.#metrics, 'nodes', 'get', () => this.#api.get<V1Node>(this.#path));
      if (original === undefined) throw new Error(`node "${this.#options.nodeName}" not found`);
      this.#node = original;
      // Without registration (registerNode: false), the first read brings the UID.
      this.nodeUid ??= original.metadata?.uid;
    }
    const nowMs = this.#clock.now();
    const status = await this.computeStatus(original, nowMs);
    this.#recordConditionEvents(original.status?.conditions ?? [], status.conditions ?? []);
    const originalStatus = (compactJson(original.status ?? {}) ?? {}) as Record<string, unknown>;
    const changed = nodeStatusChanged(original.status, status);
    const due =
      this.#lastReportAtMs === undefined ||
      nowMs - this.#lastReportAtMs >= (this.#options.statusReportFrequencyMs ?? 300_000);
    if (!changed && !due) return;
    const patch = twoWayMergePatch(
      originalStatus,
      (compactJson(status) ?? {}) as Record<string, unknown>,
      NODE_STATUS_MERGE_KEYS,
    );
    const wasReady = original.status?.conditions?.find((c) => c.type === 'Ready');
    this.#node = await countedCall(this.#metrics, 'nodes', 'patch', () =>
      this.#api.patch<V1Node>(`${this.#path}/status`, 'strategic', { status: patch }),
    );
    this.nodeUid ??= this.#node.metadata?.uid;
    this.#lastReportAtMs = nowMs;
    this.posts++;
    const ready = this.ready;
    if (ready !== undefined && wasReady?.status !== ready.status) {
      this.#log.info(
        { node: this.#options.nodeName, ready: ready.status, reason: ready.reason, message: ready.message },
        'Node Ready condition changed',
      );
    }
  }
}
