/**
 * Reading the manifests of a command into a proxy-state snapshot of one IP family, with every
 * skipped object reported as one line naming the file it came from.
 *
 * @module
 */
import { readFile as fsReadFile } from 'node:fs/promises';
import type { V1Node } from '@kubernetes/client-node';
import { definedFields, parseIP } from '@nodeagent/core';
import {
  buildProxySnapshots,
  collectServiceCIDRs,
  InvalidServiceError,
  type IPFamily,
  type ProxySnapshot,
} from '@nodeagent/proxy-state';
import type { InputArgs } from './args.js';
import { CliFailure, CliUsageError, oneLine } from './errors.js';
import { type ParsedManifests, parseManifests } from './parse-manifests.js';

/** Reads a manifest file; `-` means stdin. */
export type ReadManifest = (path: string) => Promise<string>;

/** What the manifests of a command amount to. */
export interface LoadedInput {
  /** The snapshot of the chosen family. */
  readonly snapshot: ProxySnapshot;
  /** The chosen family. */
  readonly family: IPFamily;
  /** Every node IP (both families), primary first. */
  readonly nodeIPs: readonly string[];
  /** The cluster CIDR of the chosen family, if given. */
  readonly clusterCIDR: string | undefined;
  /**
   * The service CIDRs of the chosen family: `--service-cluster-ip-range` and the `spec.cidrs`
   * of `ServiceCIDR` objects in the manifests, canonical, sorted, without duplicates.
   */
  readonly serviceCIDRs: readonly string[];
  /** One line per skipped document or object (`file: what is wrong`). */
  readonly problems: readonly string[];
  /** Informational lines (duplicates, other-family hints, ignored kinds when verbose). */
  readonly notes: readonly string[];
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The default {@link ReadManifest}: the file as UTF-8, or all of stdin for `-`. */
export const defaultReadManifest: ReadManifest = (path) =>
  path === '-' ? readStdin() : fsReadFile(path, 'utf8');

function displayName(file: string): string {
  return file === '-' ? '<stdin>' : oneLine(file);
}

function objectKey(kind: string, obj: { metadata?: { namespace?: string; name?: string } }): string {
  const ns = obj.metadata?.namespace || 'default';
  return `${kind} ${ns}/${obj.metadata?.name ?? ''}`;
}

function familyOf(ip: string): IPFamily {
  return parseIP(ip)?.family ?? 4;
}

/** The node's addresses in the order proxy-state uses them (InternalIP, then ExternalIP). */
function nodeObjectIPs(node: V1Node | undefined): string[] {
  const addrs = node?.status?.addresses ?? [];
  const out: string[] = [];
  for (const type of ['InternalIP', 'ExternalIP']) {
    for (const a of addrs) {
      const p = a.type === type ? parseIP(String(a.address)) : null;
      if (p && !out.includes(p.ip)) out.push(p.ip);
    }
  }
  return out;
}

/**
 * Reads every file, parses the manifests and builds the snapshot of the family to use.
 * @param packetFamily the family of a traced packet's destination (trace only).
 * @throws CliFailure when a file cannot be read; CliUsageError when no node IP is known.
 */
export async function loadInput(
  input: InputArgs,
  read: ReadManifest,
  command: string,
  packetFamily?: IPFamily,
): Promise<LoadedInput> {
  const problems: string[] = [];
  const notes: string[] = [];
  const services: ParsedManifests['services'][number][] = [];
  const endpointSlices: ParsedManifests['endpointSlices'][number][] = [];
  const nodes: V1Node[] = [];
  const serviceCIDRObjects: ParsedManifests['serviceCIDRs'][number][] = [];
  const serviceCIDROrigin = new Map<string, string>();
  const origin = new Map<string, string>();
  for (const file of input.files) {
    let text: string;
    try {
      text = await read(file);
    } catch (e) {
      throw new CliFailure(`cannot read ${displayName(file)}: ${oneLine((e as Error).message)}`);
    }
    const parsed = parseManifests(text);
    const name = displayName(file);
    for (const e of parsed.errors) problems.push(`${name}: ${oneLine(e.message)}`);
    const remember = (kind: string, obj: { metadata?: { namespace?: string; name?: string } }) => {
      const key = objectKey(kind, obj);
      const first = origin.get(key);
      if (first !== undefined)
        notes.push(`${oneLine(key)} appears again in ${name} (first in ${first}): the last one is used`);
      origin.set(key, name);
    };
    for (const s of parsed.services) {
      remember('Service', s);
      services.push(s);
    }
    for (const s of parsed.endpointSlices) {
      remember('EndpointSlice', s);
      endpointSlices.push(s);
    }
    nodes.push(...parsed.nodes);
    for (const c of parsed.serviceCIDRs) {
      serviceCIDROrigin.set(c.metadata?.name ?? '', name);
      serviceCIDRObjects.push(c);
    }
    if (input.verbose) for (const i of parsed.ignored) notes.push(`${name}: ignored ${oneLine(i)}`);
  }

  const node = nodes.filter((n) => n.metadata?.name === input.nodeName).at(-1);
  const nodeIPs = input.nodeIPs.length > 0 ? [...input.nodeIPs] : nodeObjectIPs(node);
  if (nodeIPs.length === 0) {
    throw new CliUsageError(
      `--node-ip is required: no Node named ${JSON.stringify(input.nodeName)} with addresses in the manifests`,
      command,
    );
  }
  const built = buildProxySnapshots({
    nodeName: input.nodeName,
    nodeIPs,
    services,
    endpointSlices,
    ...definedFields({ node }),
  });
  for (const e of built.errors) {
    const key =
      e instanceof InvalidServiceError
        ? `Service ${e.namespace}/${e.serviceName}`
        : `EndpointSlice ${e.namespace}/${e.sliceName}`;
    const file = origin.get(key);
    problems.push(`${file !== undefined ? `${file}: ` : ''}${oneLine(e.message)}`);
  }

  const family = input.ipFamily ?? packetFamily ?? familyOf(nodeIPs[0]!);
  const snapshot = family === 4 ? built.v4 : built.v6;
  const other = family === 4 ? built.v6 : built.v4;
  if (snapshot.services.size === 0 && other.services.size > 0) {
    notes.push(
      `no IPv${family} service ports in the input; ${other.services.size} IPv${other.ipFamily} ` +
        `port(s) found (use --ip-family ${other.ipFamily})`,
    );
  }
  if (!nodeIPs.some((ip) => familyOf(ip) === family)) {
    notes.push(`no IPv${family} node IP given: node ports and node-IP rules are written without one`);
  }
  const clusterCIDR = input.clusterCIDRs.find((c) => familyOf(c.split('/')[0]!) === family);
  if (input.clusterCIDRs.length > 0 && clusterCIDR === undefined) {
    notes.push(`no IPv${family} --cluster-cidr: local-traffic detection is off for IPv${family}`);
  }
  const collected = collectServiceCIDRs(serviceCIDRObjects, family);
  for (const e of collected.errors) {
    const file = serviceCIDROrigin.get(e.objectName);
    problems.push(`${file !== undefined ? `${file}: ` : ''}${oneLine(e.message)}`);
  }
  const fromFlag = input.serviceClusterIPRanges.filter((c) => familyOf(c.split('/')[0]!) === family);
  const serviceCIDRs = [...new Set([...fromFlag, ...collected.cidrs])].sort();
  return { snapshot, family, nodeIPs, clusterCIDR, serviceCIDRs, problems, notes };
}
