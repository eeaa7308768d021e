/**
 * The Node object the agent registers and the status fields it reports besides conditions
 * (upstream `initialNode`, `updateDefaultLabels` and the `NodeAddress`, `MachineInfo`,
 * `VersionInfo`, `DaemonEndpoints` and `Images` setters), plus the parsers of
 * `--node-labels` and `--register-with-taints`.
 *
 * @module
 */
import type {
  V1ContainerImage,
  V1Node,
  V1NodeAddress,
  V1NodeSystemInfo,
  V1Taint,
} from '@kubernetes/client-node';
import type { MachineInfo } from './machine-info.js';

/** `--node-labels` / `--register-with-taints` text that does not parse. */
export class InvalidNodeFlagError extends Error {
  override readonly name = 'InvalidNodeFlagError';
  /** @param flag the flag. @param detail what is wrong. */
  constructor(
    readonly flag: string,
    detail: string,
  ) {
    super(`${flag}: ${detail}`);
  }
}

const TAINT_EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Parses `--node-labels` (`key=value,key2=value2`). @throws InvalidNodeFlagError */
export function parseNodeLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0)
      throw new InvalidNodeFlagError('--node-labels', `expected key=value, got ${JSON.stringify(part)}`);
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (!LABEL_KEY.test(key))
      throw new InvalidNodeFlagError('--node-labels', `invalid label key ${JSON.stringify(key)}`);
    if (!LABEL_VALUE.test(value)) {
      throw new InvalidNodeFlagError(
        '--node-labels',
        `invalid label value ${JSON.stringify(value)} of ${key}`,
      );
    }
    out[key] = value;
  }
  return out;
}

/** Parses `--register-with-taints` (`key=value:Effect,key:Effect`). @throws InvalidNodeFlagError */
export function parseTaints(text: string): V1Taint[] {
  const out: V1Taint[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const colon = part.lastIndexOf(':');
    if (colon <= 0) {
      throw new InvalidNodeFlagError(
        '--register-with-taints',
        `expected key[=value]:Effect, got ${JSON.stringify(part)}`,
      );
    }
    const effect = part.slice(colon + 1);
    if (!TAINT_EFFECTS.has(effect)) {
      throw new InvalidNodeFlagError(
        '--register-with-taints',
        `invalid taint effect ${JSON.stringify(effect)}: expected NoSchedule, PreferNoSchedule or NoExecute`,
      );
    }
    const [key = '', value] = part.slice(0, colon).split('=', 2);
    if (!LABEL_KEY.test(key) || (value !== undefined && !LABEL_VALUE.test(value))) {
      throw new InvalidNodeFlagError('--register-with-taints', `invalid taint ${JSON.stringify(part)}`);
    }
    out.push(value === undefined ? { key, effect } : { key, value, effect });
  }
  return out;
}

/** The labels the kubelet sets and keeps reconciled: hostname, os and arch (stable and beta). */
export function defaultNodeLabels(
  hostname: string,
  machine: Pick<MachineInfo, 'os' | 'arch'>,
): Record<string, string> {
  return {
    'kubernetes.io/hostname': hostname,
    'kubernetes.io/os': machine.os,
    'kubernetes.io/arch': machine.arch,
    'beta.kubernetes.io/os': machine.os,
    'beta.kubernetes.io/arch': machine.arch,
  };
}

/**
 * The default labels of `wanted` that `existing` lacks or has with another value (upstream
 * `updateDefaultLabels`); an empty object when nothing needs patching. `--node-labels` are
 * only applied at creation, as upstream.
 */
export function defaultLabelsToReconcile(
  wanted: Readonly<Record<string, string>>,
  existing: V1Node,
): Record<string, string> {
  const have = existing.metadata?.labels ?? {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(wanted)) if (have[k] !== v) out[k] = v;
  return out;
}

/**
 * The node's addresses (upstream `NodeAddress` without a cloud provider): each `--node-ip` (or
 * the detected address) as InternalIP, then the host name as Hostname.
 */
export function nodeAddresses(
  nodeIps: readonly string[],
  detectedIp: string,
  hostname: string,
): V1NodeAddress[] {
  const ips = nodeIps.length > 0 ? nodeIps : [detectedIp];
  return [
    ...ips.map((address) => ({ type: 'InternalIP', address })),
    { type: 'Hostname', address: hostname },
  ];
}

/** `status.nodeInfo`. */
export function nodeSystemInfo(
  machine: MachineInfo,
  containerRuntimeVersion: string,
  kubeletVersion: string,
): V1NodeSystemInfo {
  return {
    architecture: machine.arch,
    bootID: machine.bootId,
    containerRuntimeVersion,
    kernelVersion: machine.kernelVersion,
    kubeProxyVersion: '',
    kubeletVersion,
    machineID: machine.machineId,
    operatingSystem: machine.os,
    osImage: machine.osImage,
    systemUUID: machine.systemUuid,
  };
}

/** An image on the node, as the runtime lists it. */
export interface NodeImage {
  /** Repo digests (`repo@sha256:…`). */
  readonly repoDigests: readonly string[];
  /** Repo tags (`repo:tag`). */
  readonly repoTags: readonly string[];
  /** Size, bytes. */
  readonly sizeBytes: number;
}

/** Upstream `MaxNamesPerImageInNodeStatus`. */
export const MAX_NAMES_PER_IMAGE = 5;
/** Upstream default `nodeStatusMaxImages`. */
export const DEFAULT_NODE_STATUS_MAX_IMAGES = 50;

/**
 * `status.images` (upstream `Images` setter): largest first, at most `maxImages` (-1: all),
 * each with its digests then tags, at most 5 names; images without names are skipped.
 */
export function nodeImages(
  images: readonly NodeImage[],
  maxImages = DEFAULT_NODE_STATUS_MAX_IMAGES,
): V1ContainerImage[] {
  const sorted = [...images].sort((a, b) => b.sizeBytes - a.sizeBytes);
  const capped = maxImages < 0 ? sorted : sorted.slice(0, maxImages);
  const out: V1ContainerImage[] = [];
  for (const img of capped) {
    const names = [...img.repoDigests, ...img.repoTags];
    if (names.length === 0) continue;
    out.push({ names: names.slice(0, MAX_NAMES_PER_IMAGE), sizeBytes: img.sizeBytes });
  }
  return out;
}
