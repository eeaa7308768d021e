/**
 * The API server source (upstream `config/apiserver.go`): the pods bound to this node, from an
 * informer with `fieldSelector: spec.nodeName=<node>`, sent as a full snapshot after the
 * informer synced and after every change (the changes the informer delivers in one go coalesce
 * into one snapshot, sent before the event loop's next turn).
 * Mirror pods are not sent: they are the API's view of static pods and never drive a pod;
 * {@link ApiServerSource.mirrorPods} lists them for the mirror pod reconciler.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { type Lifecycle, StartOnce } from '@nodeagent/core';
import type { HandlerRegistration, KubeObject, SharedInformer } from '@nodeagent/informer';
import type { PodSourceSink } from './pod-config.js';
import { isMirrorPod } from './pod-update.js';

/** What the source needs of the pod informer. */
export type PodInformer = Pick<
  SharedInformer<V1Pod & KubeObject>,
  'addEventHandler' | 'removeHandler' | 'waitForSync' | 'lister'
>;

/** Options of {@link ApiServerSource}. */
export interface ApiServerSourceOptions {
  /** The informer of this node's pods (`spec.nodeName=<node>`); started by its owner. */
  readonly informer: PodInformer;
  /** Where the snapshots go (`podConfig.channel('api')`). */
  readonly sink: PodSourceSink;
  /** Called after each snapshot with the current mirror pods (to reconcile them). @default none */
  readonly onMirrorPods?: (mirrorPods: V1Pod[]) => void;
}

/** Sends the API server's pods of this node into the merge. */
export class ApiServerSource implements Lifecycle {
  readonly #options: ApiServerSourceOptions;
  readonly #once = new StartOnce('ApiServerSource');
  #registration: HandlerRegistration | undefined;
  #synced = false;
  #scheduled = false;
  #stopped = false;

  /** @param options see {@link ApiServerSourceOptions}. */
  constructor(options: ApiServerSourceOptions) {
    this.#options = options;
  }

  /** Registers with the informer; resolves after its first snapshot (the informer synced). */
  start(signal?: AbortSignal): Promise<void> {
    return this.#once.run(
      signal,
      async () => {
        const { informer } = this.#options;
        const schedule = () => this.#schedule();
        this.#registration = informer.addEventHandler(
          { onAdd: schedule, onUpdate: schedule, onDelete: schedule },
          { name: 'pod-config-api' },
        );
        await informer.waitForSync(signal);
        this.#synced = true;
        this.#flush();
      },
      () => this.stop(),
    );
  }

  /** Stops sending. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#registration !== undefined) this.#options.informer.removeHandler(this.#registration);
    this.#registration = undefined;
  }

  /** The mirror pods the API server has for this node. */
  mirrorPods(): V1Pod[] {
    return this.#options.informer.lister.list().filter(isMirrorPod);
  }

  /**
   * One snapshot for the changes the informer delivers in one go, sent as a microtask once they
   * are in: within the same turn of the event loop. A `setImmediate` here put the whole pod
   * pipeline behind it (admission, the pod worker, the runtime's first calls) in the event
   * loop's check phase, where the runtime's HTTP/2 frames, written from that phase, then waited
   * for the next turn's timers and I/O: 2–4 ms before `RunPodSandbox` left, at p50 on a busy node.
   */
  #schedule(): void {
    if (!this.#synced || this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#stopped) return;
    const all = this.#options.informer.lister.list();
    this.#options.sink.send({ op: 'SET', pods: all.filter((p) => !isMirrorPod(p)) });
    this.#options.onMirrorPods?.(all.filter(isMirrorPod));
  }
}
