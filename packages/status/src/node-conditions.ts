/**
 * The node conditions the kubelet writes (upstream `nodestatus` setters): `MemoryPressure`,
 * `DiskPressure`, `PIDPressure` (fed by the eviction manager through
 * {@link NodePressureProvider}) and `Ready`, with upstream's reasons and messages.
 * `lastHeartbeatTime` is the time of every computation, `lastTransitionTime` changes only
 * when the status flips.
 *
 * @module
 */
import type { V1NodeCondition } from '@kubernetes/client-node';

/** Which pressures the node is under (the eviction manager implements this). */
export interface NodePressureProvider {
  /** `memory.available` (or allocatable memory) is below its threshold. */
  isUnderMemoryPressure(): boolean;
  /** A disk signal (nodefs / imagefs) is below its threshold. */
  isUnderDiskPressure(): boolean;
  /** `pid.available` is below its threshold. */
  isUnderPIDPressure(): boolean;
}

/** No pressure ever: the default until an eviction manager is wired in. */
export const noNodePressure: NodePressureProvider = {
  isUnderMemoryPressure: () => false,
  isUnderDiskPressure: () => false,
  isUnderPIDPressure: () => false,
};

/**
 * The event reason the kubelet records when a condition flips, or when a pressure condition
 * appears (upstream `recordNodeStatusEvent`), by condition type and new status.
 */
export const NODE_CONDITION_EVENTS: Readonly<
  Record<string, { readonly True: string; readonly False: string }>
> = {
  MemoryPressure: { True: 'NodeHasInsufficientMemory', False: 'NodeHasSufficientMemory' },
  DiskPressure: { True: 'NodeHasDiskPressure', False: 'NodeHasNoDiskPressure' },
  PIDPressure: { True: 'NodeHasInsufficientPID', False: 'NodeHasSufficientPID' },
  Ready: { True: 'NodeReady', False: 'NodeNotReady' },
};

/** The condition types the kubelet owns, in the order it appends them. */
export const NODE_CONDITION_TYPES = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'] as const;

interface PressureTexts {
  readonly trueReason: string;
  readonly trueMessage: string;
  readonly falseReason: string;
  readonly falseMessage: string;
}

const PRESSURE: Readonly<Record<'MemoryPressure' | 'DiskPressure' | 'PIDPressure', PressureTexts>> = {
  MemoryPressure: {
    trueReason: 'KubeletHasInsufficientMemory',
    trueMessage: 'kubelet has insufficient memory available',
    falseReason: 'KubeletHasSufficientMemory',
    falseMessage: 'kubelet has sufficient memory available',
  },
  DiskPressure: {
    trueReason: 'KubeletHasDiskPressure',
    trueMessage: 'kubelet has disk pressure',
    falseReason: 'KubeletHasNoDiskPressure',
    falseMessage: 'kubelet has no disk pressure',
  },
  PIDPressure: {
    trueReason: 'KubeletHasInsufficientPID',
    trueMessage: 'kubelet has insufficient PID available',
    falseReason: 'KubeletHasSufficientPID',
    falseMessage: 'kubelet has sufficient PID available',
  },
};

function withTimes(
  next: Omit<V1NodeCondition, 'lastHeartbeatTime' | 'lastTransitionTime'>,
  previous: V1NodeCondition | undefined,
  now: string,
): V1NodeCondition {
  const transition =
    previous !== undefined && previous.status === next.status && previous.lastTransitionTime !== undefined
      ? previous.lastTransitionTime
      : now;
  // Plain API JSON (RFC 3339 strings); client-node's types say Date.
  return { ...next, lastHeartbeatTime: now as unknown as Date, lastTransitionTime: transition as Date };
}

/** A pressure condition at `now` (RFC 3339), keeping `previous`'s transition time unless it flips. */
export function pressureCondition(
  type: 'MemoryPressure' | 'DiskPressure' | 'PIDPressure',
  underPressure: boolean,
  previous: V1NodeCondition | undefined,
  now: string,
): V1NodeCondition {
  const t = PRESSURE[type];
  return withTimes(
    {
      type,
      status: underPressure ? 'True' : 'False',
      reason: underPressure ? t.trueReason : t.falseReason,
      message: underPressure ? t.trueMessage : t.falseMessage,
    },
    previous,
    now,
  );
}

/**
 * Upstream's aggregate error text: one message as is, several as `[a, b]` (duplicates dropped).
 */
export function aggregateMessage(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

/**
 * The Ready condition at `now`: True with `KubeletReady` / "kubelet is posting ready status"
 * when `errors` is empty, else False with `KubeletNotReady` and the errors aggregated.
 */
export function readyCondition(
  errors: readonly string[],
  previous: V1NodeCondition | undefined,
  now: string,
): V1NodeCondition {
  const ready = errors.length === 0;
  return withTimes(
    {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: ready ? 'KubeletReady' : 'KubeletNotReady',
      message: ready ? 'kubelet is posting ready status' : aggregateMessage(errors),
    },
    previous,
    now,
  );
}

/** A runtime condition as the CRI `Status` call reports it. */
export interface RuntimeConditionLike {
  /** `RuntimeReady`, `NetworkReady`, … */
  readonly type: string;
  /** Whether the condition holds. */
  readonly status: boolean;
  /** Machine-readable reason. */
  readonly reason: string;
  /** Human-readable message. */
  readonly message: string;
}

/** What decides Ready besides capacity: the runtime's answer and the health checks. */
export interface RuntimeReadiness {
  /** The runtime's Status conditions, or `undefined` when the runtime is down / not checked yet. */
  readonly conditions: readonly RuntimeConditionLike[] | undefined;
  /** Whether a runtime Status call ever succeeded. @default true */
  readonly everChecked?: boolean;
  /** Failing health checks by name → message (e.g. `{ PLEG: 'pleg was last seen active ...' }`). @default {} */
  readonly unhealthy?: Readonly<Record<string, string>>;
}

function conditionText(c: RuntimeConditionLike): string {
  return `${c.type}=${c.status} reason:${c.reason} message:${c.message}`;
}

/**
 * The kubelet's not-ready errors (upstream `runtimeState.runtimeErrors` and `networkErrors`), in
 * its words and order: runtime down / not checked, `<check> is not healthy: <msg>`, `container
 * runtime not ready: …`, then `container runtime network not ready: …`.
 */
export function runtimeReadinessErrors(r: RuntimeReadiness): string[] {
  const errors: string[] = [];
  if (r.conditions === undefined) {
    errors.push(
      r.everChecked === false
        ? 'container runtime status check may not have completed yet'
        : 'container runtime is down',
    );
  }
  for (const [name, message] of Object.entries(r.unhealthy ?? {}))
    errors.push(`${name} is not healthy: ${message}`);
  if (r.conditions !== undefined) {
    const find = (type: string) => r.conditions?.find((c) => c.type === type);
    const runtime = find('RuntimeReady');
    if (runtime?.status !== true) {
      errors.push(
        `container runtime not ready: ${runtime ? conditionText(runtime) : 'RuntimeReady missing'}`,
      );
    }
    const network = find('NetworkReady');
    if (network?.status !== true) {
      errors.push(
        `container runtime network not ready: ${network ? conditionText(network) : 'NetworkReady missing'}`,
      );
    }
  }
  return errors;
}
