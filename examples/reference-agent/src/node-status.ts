/**
 * Node registration and status (upstream `kubelet_node_status.go`, in miniature): create the
 * Node if it is missing (retrying with backoff), then every `nodeStatusUpdateFrequency`
 * (10 s) compute the status — Ready from the runtime's Status call and PLEG health,
 * capacity, addresses, nodeInfo with the runtime version — and PATCH `nodes/<name>/status`
 * when it changed or `nodeStatusReportFrequency` (5 min) passed.
 *
 * @module
 */
import type { V1Node, V1NodeCondition, V1NodeStatus } from '@kubernetes/client-node';
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
import type { CriClient } from '@nodeagent/cri';
import { type EventRecorder, NodeNotReady, NodeReady, nodeReference } from '@nodeagent/events';
import type { PlegHealth } from '@nodeagent/pleg';
import { type ApiClient, ApiError } from './api-client.js';
import {
  initialNode,
  type MachineInfo,
  machineCapacity,
  nodeAddresses,
  nodeSystemInfo,
} from './node-info.js';
import { type ReadyInputs, readyCondition } from './node-ready.js';

/** Options of {@link NodeStatusReporter}. */
export interface NodeStatusReporterOptions {
  /** API access. */
  readonly api: ApiClient;
  /** The runtime (Version for nodeInfo, Status for Ready). */
  readonly cri: CriClient;
  /** This node's name. */
  readonly nodeName: string;
  /** Machine facts. */
  readonly machine: MachineInfo;
  /** PLEG health, part of Ready. */
  readonly plegHealth: () => PlegHealth;
  /** Records `NodeReady` / `NodeNotReady` when Ready flips. @default none */
  readonly events?: Pick<EventRecorder, 'eventf'>;
  /** `spec.podCIDR`. @default none */
  readonly podCidr?: string | undefined;
  /** InternalIP address. @default the machine's first IPv4 address */
  readonly nodeIp?: string | undefined;
  /** @default 110 */
  readonly maxPods?: number;
  /** How often the status is computed, ms. @default 10_000 */
  readonly statusUpdateMs?: number;
  /** An unchanged status is still posted this often, ms. @default 300_000 */
  readonly statusReportMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default noopLogger */
  readonly logger?: Logger;
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Registers the Node and keeps its status current. */
export class NodeStatusReporter implements Lifecycle {
  readonly #once = new StartOnce('NodeStatusReporter');
  readonly #stopping = new AbortController();
  /** The Node's UID once registered. */
  nodeUid: string | undefined;
  /** Status posts so far. */
  posts = 0;
  /** The last Ready condition computed. */
  ready: V1NodeCondition | undefined;
  #timer: Timer | undefined;
  #lastPosted: string | undefined;
  #lastPostAtMs = 0;
  #runtimeVersion = '';
  #inFlight: Promise<void> | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;

  readonly #options: NodeStatusReporterOptions;

  /** @param options see {@link NodeStatusReporterOptions}. */
  constructor(options: NodeStatusReporterOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? noopLogger).child({ component: 'node-status' });
  }

  /**
   * Registers the Node (retrying with backoff until it succeeds), posts the first status,
   * then updates it periodically until {@link NodeStatusReporter.stop}. `signal` bounds the
   * registration and first post only. A second call rejects.
   */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        await this.register(this.#stopping.signal);
        await this.update();
        this.#timer = this.#clock.setInterval(
          () => void this.update(),
          this.#options.statusUpdateMs ?? 10_000,
        );
      },
      () => this.stop(),
    );
  }

  /** Stops registering and the periodic update and waits for one in flight. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#inFlight;
  }

  /** Creates the Node unless it exists (upstream `registerWithAPIServer`). */
  async register(signal: AbortSignal): Promise<void> {
    const { api, nodeName } = this.#options;
    const backoff = new Backoff({ initialMs: 100, capMs: 7_000, clock: this.#clock });
    const node = initialNode(nodeName, this.#options.machine, {
      podCidr: this.#options.podCidr,
      maxPods: this.#options.maxPods ?? 110,
      nodeIp: this.#options.nodeIp,
    });
    for (;;) {
      try {
        const created = await api.create<V1Node>('/api/v1/nodes', node, signal);
        this.nodeUid = created.metadata?.uid;
        this.#log.info({ node: nodeName }, 'Successfully registered node');
        return;
      } catch (err) {
        if (err instanceof ApiError && err.code === 409) {
          const existing = await api.get<V1Node>(`/api/v1/nodes/${nodeName}`, signal).catch(() => undefined);
          if (existing) {
            this.nodeUid = existing.metadata?.uid;
            this.#log.info({ node: nodeName }, 'Node was previously registered');
            return;
          }
        }
        if (signal.aborted) throw err;
        this.#log.warn(
          { node: nodeName, err: (err as Error).message },
          'Unable to register node with API server',
        );
        await backoff.sleep(signal);
      }
    }
  }

  /** Computes the status and posts it when it changed or is due; never throws. */
  update(): Promise<void> {
    this.#inFlight ??= this.#doUpdate()
      .catch((err: unknown) => this.#log.warn({ err: (err as Error).message }, 'Error updating node status'))
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }

  async #runtimeInputs(): Promise<ReadyInputs['runtime']> {
    const { cri } = this.#options;
    try {
      if (this.#runtimeVersion === '') {
        const v = await cri.runtime.version({ version: 'v1' }, { timeoutMs: 5_000 });
        this.#runtimeVersion = `${v.runtimeName}://${v.runtimeVersion}`;
      }
      const res = await cri.runtime.status({}, { timeoutMs: 5_000 });
      return { conditions: res.status?.conditions ?? [] };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  async #doUpdate(): Promise<void> {
    const { machine } = this.#options;
    const now = this.#clock.now();
    const runtime = await this.#runtimeInputs();
    this.ready = readyCondition({ runtime, pleg: this.#options.plegHealth() }, this.ready, isoSeconds(now));
    const capacity = machineCapacity(machine, this.#options.maxPods ?? 110);
    const status: V1NodeStatus = {
      conditions: [this.ready],
      capacity,
      allocatable: { ...capacity },
      addresses: nodeAddresses(machine, this.#options.nodeIp),
      nodeInfo: nodeSystemInfo(machine, this.#runtimeVersion),
    };
    // Unchanged apart from the heartbeat: post only every statusReportMs (the Lease is the heartbeat).
    const comparable = JSON.stringify({ ...status, conditions: [{ ...this.ready, lastHeartbeatTime: '' }] });
    const due = now - this.#lastPostAtMs >= (this.#options.statusReportMs ?? 300_000);
    if (comparable === this.#lastPosted && !due) return;
    const patched = await this.#options.api.patch<V1Node>(
      `/api/v1/nodes/${this.#options.nodeName}/status`,
      'strategic',
      {
        status,
      },
    );
    this.nodeUid ??= patched.metadata?.uid;
    if (
      this.#lastPosted === undefined ||
      this.ready.status !== JSON.parse(this.#lastPosted).conditions[0].status
    ) {
      this.#log.info(
        { ready: this.ready.status, message: this.ready.message },
        'Node Ready condition changed',
      );
      // As upstream's Ready setter: an event on a flip, none for the first condition.
      if (this.#lastPosted !== undefined) {
        const reason = this.ready.status === 'True' ? NodeReady : NodeNotReady;
        const node = this.#options.nodeName;
        this.#options.events?.eventf(
          nodeReference(node),
          'Normal',
          reason,
          'Node %s status is now: %s',
          node,
          reason,
        );
      }
    }
    this.#lastPosted = comparable;
    this.#lastPostAtMs = now;
    this.posts++;
  }
}
