/**
 * Whether a pod needs a new sandbox (upstream `PodSandboxChanged`): none yet, none ready, more
 * than one ready, network namespace mode changed, or no IP on a pod-network sandbox.
 *
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { PodSandboxState } from '@nodeagent/cri';
import type { PodStatus } from '@nodeagent/kubecontainer';
import { networkNamespaceForPod } from './security-context.js';

/** The verdict of {@link podSandboxChanged}. */
export interface SandboxChange {
  /** A new sandbox must be created. */
  readonly changed: boolean;
  /** Attempt number of the sandbox to create (or of the current one). */
  readonly attempt: number;
  /** ID of the current sandbox, `''` when there is none or its network changed. */
  readonly sandboxId: string;
  /** Why (for logs); `''` when unchanged. */
  readonly why: string;
}

/** Decides whether the pod's sandbox must be (re)created (upstream `PodSandboxChanged`). */
export function podSandboxChanged(pod: V1Pod, status: PodStatus): SandboxChange {
  const newest = status.sandboxStatuses[0];
  if (newest === undefined) {
    return {
      changed: true,
      attempt: 0,
      sandboxId: '',
      why: 'No sandbox for pod can be found. Need to start a new one',
    };
  }
  const attempt = newest.metadata?.attempt ?? 0;
  const ready = status.sandboxStatuses.filter((s) => s.state === PodSandboxState.SANDBOX_READY).length;
  if (ready > 1) {
    return {
      changed: true,
      attempt: attempt + 1,
      sandboxId: newest.id,
      why: 'Multiple sandboxes are ready for Pod. Need to reconcile them',
    };
  }
  if (newest.state !== PodSandboxState.SANDBOX_READY) {
    return {
      changed: true,
      attempt: attempt + 1,
      sandboxId: newest.id,
      why: 'No ready sandbox for pod can be found. Need to start a new one',
    };
  }
  const network = newest.linux?.namespaces?.options?.network;
  if ((network ?? 0) !== networkNamespaceForPod(pod)) {
    return {
      changed: true,
      attempt: attempt + 1,
      sandboxId: '',
      why: 'Sandbox for pod has changed. Need to start a new one',
    };
  }
  if (pod.spec?.hostNetwork !== true && newest.network !== undefined && newest.network.ip === '') {
    return {
      changed: true,
      attempt: attempt + 1,
      sandboxId: newest.id,
      why: 'Sandbox for pod has no IP address. Need to start a new one',
    };
  }
  return { changed: false, attempt, sandboxId: newest.id, why: '' };
}
