/**
 * Makes sure a container's image is on the node (upstream `images.imageManager.EnsureImageExists`):
 * pull per `imagePullPolicy` (Always, IfNotPresent, Never → ErrImageNeverPull), ImagePullBackOff
 * keyed by pod UID + image, credentials from `kubernetes.io/dockerconfigjson` pull secrets.
 *
 * @module
 */
import type { V1Container, V1Pod, V1Secret } from '@kubernetes/client-node';
import type { KeyedBackoff, Logger } from '@nodeagent/core';
import { definedFields, formatGoDuration } from '@nodeagent/core';
import type { AuthConfig, CriClient, Image, PartialMessage, PodSandboxConfig } from '@nodeagent/cri';
import { errorMessage, SyncErrorReason, SyncStepError } from './errors.js';
import type { RuntimeEventRecorder } from './event-recorder.js';
import type { RuntimeMetrics } from './metrics.js';

/** What {@link ImagePuller.prefetch} learned of an image: its node-local ID (`''` when absent) and the image. */
export interface PrefetchedImage {
  readonly id: string;
  readonly image: Image | undefined;
}

/** Adds `:latest` to a reference with neither tag nor digest (upstream `applyDefaultImageTag`). @throws SyncStepError InvalidImageName */
export function applyDefaultImageTag(image: string): string {
  if (
    image === '' ||
    /\s/.test(image) ||
    !/^[a-z0-9]/.test(image) ||
    /[A-Z]/.test(image.split(/[:@]/)[0] ?? '')
  ) {
    throw new SyncStepError(
      SyncErrorReason.InvalidImageName,
      `Failed to apply default image tag ${JSON.stringify(image)}: couldn't parse image name ${JSON.stringify(image)}: invalid reference format`,
    );
  }
  if (image.includes('@')) return image;
  const last = image.slice(image.lastIndexOf('/') + 1);
  return last.includes(':') ? image : `${image}:latest`;
}

/** The pull policy, defaulted as the API server does: Always for `:latest` or no tag, else IfNotPresent. */
export function effectivePullPolicy(container: V1Container): 'Always' | 'IfNotPresent' | 'Never' {
  const p = container.imagePullPolicy;
  if (p === 'Always' || p === 'IfNotPresent' || p === 'Never') return p;
  const image = container.image ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The registry host of an image reference (`docker.io` when none). */
export function imageRegistry(image: string): string {
  const first = image.split('/')[0] ?? '';
  if (!image.includes('/') || (!first.includes('.') && !first.includes(':') && first !== 'localhost'))
    return 'docker.io';
  return first;
}

function normalizeRegistryKey(key: string): string {
  const host = key.replace(/^https?:\/\//, '').split('/')[0] ?? '';
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

/** Credentials for `image` found in dockerconfigjson / dockercfg pull secrets, in secret order. */
export function credentialsFor(image: string, secrets: readonly V1Secret[]): PartialMessage<AuthConfig>[] {
  const registry = imageRegistry(image);
  const out: PartialMessage<AuthConfig>[] = [];
  for (const secret of secrets) {
    const raw = secret.data?.['.dockerconfigjson'] ?? secret.data?.['.dockercfg'];
    if (raw === undefined) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
    } catch {
      continue;
    }
    const obj = parsed as { auths?: Record<string, Record<string, string>> } & Record<
      string,
      Record<string, string>
    >;
    const auths = obj.auths ?? obj;
    for (const [key, entry] of Object.entries(auths)) {
      if (normalizeRegistryKey(key) !== registry || typeof entry !== 'object' || entry === null) continue;
      let { username = '', password = '' } = entry;
      if (entry.auth && username === '') {
        const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
        const i = decoded.indexOf(':');
        if (i !== -1) {
          username = decoded.slice(0, i);
          password = decoded.slice(i + 1);
        }
      }
      out.push({
        username,
        password,
        serverAddress: key,
        identityToken: entry.identitytoken ?? '',
        registryToken: entry.registrytoken ?? '',
      });
    }
  }
  return out;
}

/** Dependencies of {@link ImagePuller}. */
export interface ImagePullerDeps {
  /** The image service. */
  readonly cri: Pick<CriClient, 'image'>;
  /** ImagePullBackOff state. */
  readonly backoff: KeyedBackoff;
  /** Pull progress and failures. */
  readonly logger: Logger;
  /** Current time, ms since the epoch. */
  readonly now: () => number;
  /** The metrics recorder, once created. */
  readonly metrics: () => RuntimeMetrics | undefined;
  /** The image events (`Pulling`, `Pulled`, `Failed`, `BackOff`, …); must not throw. @default none */
  readonly recorder?: RuntimeEventRecorder;
  /**
   * Pulls in flight at once (the kubelet's `maxParallelImagePulls`; 1 is its
   * `serializeImagePulls: true`); the others wait their turn. Minimum: 1. @default unlimited
   */
  readonly maxParallelImagePulls?: number;
}

/** A counting semaphore: `acquire` resolves when one of `size` slots is free (FIFO). */
class PullSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#free++;
  }
}

/** Pulls images for containers as the kubelet's image manager does. */
export class ImagePuller {
  readonly #deps: ImagePullerDeps;
  readonly #slots: PullSlots | undefined;

  /** @throws RangeError when `maxParallelImagePulls` is not an integer >= 1 */
  constructor(deps: ImagePullerDeps) {
    this.#deps = deps;
    const max = deps.maxParallelImagePulls;
    if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
      throw new RangeError(`ImagePuller: maxParallelImagePulls must be an integer >= 1, got ${max}`);
    }
    this.#slots = max === undefined ? undefined : new PullSlots(max);
  }

  /**
   * Resolves with the image reference to create the container from.
   * @throws SyncStepError with reason ErrImageNeverPull, ImagePullBackOff, ErrImagePull, ImageInspectError or InvalidImageName
   */
  async ensureImageExists(
    pod: V1Pod,
    container: V1Container,
    pullSecrets: readonly V1Secret[],
    sandboxConfig: PodSandboxConfig | undefined,
    prefetched?: Promise<string | undefined>,
  ): Promise<string> {
    const log = this.#deps.logger;
    const record = this.#deps.recorder ?? (() => {});
    // Event messages name the image as the spec does (upstream `container.Image`).
    const requested = container.image ?? '';
    let image: string;
    let present: string;
    try {
      image = applyDefaultImageTag(requested);
      present = (await prefetched) ?? (await this.inspect(image));
    } catch (err) {
      const why =
        err instanceof SyncStepError && err.reason === SyncErrorReason.InvalidImageName
          ? err.message
          : `Failed to inspect image ${JSON.stringify(requested)}: ${errorMessage((err as Error).cause ?? err)}`;
      record(pod, container, 'Warning', 'InspectFailed', why);
      throw err;
    }
    const policy = effectivePullPolicy(container);
    const shouldPull = policy === 'Always' || (policy === 'IfNotPresent' && present === '');
    if (!shouldPull) {
      if (present !== '') {
        const msg = `Container image ${JSON.stringify(requested)} already present on machine`;
        log.debug({ pod: pod.metadata?.name, image }, msg);
        record(pod, container, 'Normal', 'Pulled', msg);
        return present;
      }
      const msg = `Container image "${image}" is not present with pull policy of Never`;
      record(
        pod,
        container,
        'Warning',
        'ErrImageNeverPull',
        `Container image ${JSON.stringify(requested)} is not present with pull policy of Never`,
      );
      throw new SyncStepError(SyncErrorReason.ErrImageNeverPull, msg);
    }
    const key = `${pod.metadata?.uid ?? ''}_${image}`;
    if (this.#deps.backoff.isInBackOffSinceUpdate(key)) {
      record(pod, container, 'Normal', 'BackOff', `Back-off pulling image ${JSON.stringify(requested)}`);
      throw new SyncStepError(SyncErrorReason.ImagePullBackOff, `Back-off pulling image "${image}"`);
    }
    log.info({ pod: pod.metadata?.name, image }, `Pulling image "${image}"`);
    record(pod, container, 'Normal', 'Pulling', `Pulling image ${JSON.stringify(requested)}`);
    const start = this.#deps.now();
    const creds = credentialsFor(image, pullSecrets);
    let lastErr: unknown;
    // With a pull limit, the pull waits for a slot: "in X" is the pull, "Y including waiting" the whole.
    await this.#slots?.acquire();
    const pullStart = this.#deps.now();
    try {
      for (const auth of creds.length > 0 ? creds : [undefined]) {
        try {
          // No deadline, as upstream's remote image service (`context.WithCancel`, not the
          // runtimeRequestTimeout of the other calls): a large image may take long.
          const res = await this.#deps.cri.image.pullImage(
            {
              image: { image, userSpecifiedImage: container.image ?? '' },
              ...definedFields({ auth }),
              ...definedFields({ sandboxConfig }),
            },
            { timeoutMs: Number.POSITIVE_INFINITY },
          );
          const pulledAt = this.#deps.now();
          const tookMs = Math.floor(pulledAt - pullStart);
          const withWaitMs = Math.floor(pulledAt - start);
          const size = await this.#imageSize(image);
          this.#deps.metrics()?.observeImagePull(tookMs / 1000, size);
          log.info(
            { pod: pod.metadata?.name, image },
            `Successfully pulled image "${image}" in ${Math.round(tookMs)}ms`,
          );
          record(
            pod,
            container,
            'Normal',
            'Pulled',
            `Successfully pulled image ${JSON.stringify(requested)} in ${formatGoDuration(tookMs)} (${formatGoDuration(withWaitMs)} including waiting). Image size: ${size} bytes.`,
          );
          this.#deps.backoff.gc();
          return res.imageRef;
        } catch (err) {
          lastErr = err;
        }
      }
    } finally {
      this.#slots?.release();
    }
    log.warn(
      { pod: pod.metadata?.name, image, err: errorMessage(lastErr) },
      `Failed to pull image "${image}"`,
    );
    record(
      pod,
      container,
      'Warning',
      'Failed',
      `Failed to pull image ${JSON.stringify(requested)}: ${errorMessage(lastErr)}`,
    );
    this.#deps.backoff.next(key, this.#deps.now());
    throw new SyncStepError(
      SyncErrorReason.ErrImagePull,
      `Failed to pull image "${image}": ${errorMessage(lastErr)}`,
      {
        cause: lastErr,
      },
    );
  }

  /**
   * The node-local ID of `image`, `''` when absent.
   * @throws SyncStepError ImageInspectError when the runtime cannot answer
   */
  async inspect(image: string): Promise<string> {
    try {
      const status = await this.#deps.cri.image.imageStatus({ image: { image } });
      return status.image?.id ?? '';
    } catch (err) {
      throw new SyncStepError(
        SyncErrorReason.ImageInspectError,
        `Failed to inspect image "${image}": ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }

  /**
   * Starts the image checks of the containers now (e.g. while the sandbox is being created), by
   * the image as named in the spec: one `ImageStatus` each, whose answer gives both the image's
   * node-local ID (what {@link inspect} gives) and its user. Failures resolve to undefined so
   * the real check runs again.
   */
  prefetch(containers: readonly V1Container[]): Map<string, Promise<PrefetchedImage | undefined>> {
    const out = new Map<string, Promise<PrefetchedImage | undefined>>();
    for (const c of containers) {
      const raw = c.image ?? '';
      if (out.has(raw)) continue;
      try {
        const image = applyDefaultImageTag(raw);
        out.set(
          raw,
          this.#deps.cri.image.imageStatus({ image: { image } }).then(
            (s) => ({ id: s.image?.id ?? '', image: s.image }),
            () => undefined,
          ),
        );
      } catch {
        // an invalid name is reported by ensureImageExists itself
      }
    }
    return out;
  }

  async #imageSize(image: string): Promise<number> {
    try {
      const s = await this.#deps.cri.image.imageStatus({ image: { image } });
      return Number(s.image?.size ?? 0n);
    } catch {
      return 0;
    }
  }
}
