/**
 * Teardown of a node sandbox, in the order that leaves nothing behind: pods via CRI, containerd,
 * runc containers, shims, mounts, the node netns, files. Every step runs even when an earlier one
 * failed; what remains at the end is reported as a {@link NodeSandboxLeakError}.
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, runCommand } from './command.js';
import { connectCri, criProtoAvailable } from './cri-grpc.js';
import { mountsUnder, unmountUnder } from './mounts.js';
import type { Netns } from './netns.js';
import { deleteNetnsByName } from './netns-stale.js';
import {
  SANDBOX_DIR_PREFIX,
  type SandboxLayout,
  type SandboxOwner,
  sandboxLayout,
} from './node-sandbox-layout.js';
import { descendantsOf, findProcessesWithArg, isAlive, killPids } from './procfs.js';

/** Thrown by `NodeSandbox.stop()` when something the sandbox created is still there. */
export class NodeSandboxLeakError extends Error {
  override readonly name = 'NodeSandboxLeakError';
  constructor(
    readonly leaks: readonly string[],
    readonly warnings: readonly string[],
  ) {
    super(
      `node sandbox left things behind:\n  ${leaks.join('\n  ')}` +
        (warnings.length ? `\nwhile stopping:\n  ${warnings.join('\n  ')}` : ''),
    );
  }
}

/** The part of a namespace the teardown needs. */
type NetnsHandle = Pick<Netns, 'name' | 'path' | 'stop'>;

/** What the teardown needs to know about a sandbox. */
export interface SandboxTeardownInput {
  readonly layout: SandboxLayout;
  /** PID of containerd as started (verified against its argv before any signal is sent). */
  readonly containerdPid: number | undefined;
  readonly netns: NetnsHandle | undefined;
}

/** Where libcni caches ADD results (not configurable through containerd 1.6's CRI config). */
const CNI_RESULT_CACHE = '/var/lib/cni/results';

interface PodRef {
  id: string;
}

/** Stop and remove every container and pod sandbox through CRI, so CNI DEL runs for each pod. */
async function removePodsViaCri(socketPath: string, warnings: string[]): Promise<void> {
  if (!criProtoAvailable() || !existsSync(socketPath)) return;
  const cri = await connectCri(`unix://${socketPath}`);
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (e) {
      warnings.push(`${what}: ${(e as Error).message}`);
    }
  };
  try {
    const opts = { timeoutMs: 15_000 };
    let containers: PodRef[] = [];
    await attempt('ListContainers', async () => {
      containers = (await cri.runtime<{ containers: PodRef[] }>('ListContainers', {}, opts)).containers;
    });
    for (const c of containers) {
      await attempt(`StopContainer ${c.id}`, () =>
        cri.runtime('StopContainer', { container_id: c.id, timeout: 0 }, opts),
      );
      await attempt(`RemoveContainer ${c.id}`, () =>
        cri.runtime('RemoveContainer', { container_id: c.id }, opts),
      );
    }
    let pods: PodRef[] = [];
    await attempt('ListPodSandbox', async () => {
      pods = (await cri.runtime<{ items: PodRef[] }>('ListPodSandbox', {}, opts)).items;
    });
    for (const p of pods) {
      await attempt(`StopPodSandbox ${p.id}`, () =>
        cri.runtime('StopPodSandbox', { pod_sandbox_id: p.id }, opts),
      );
      await attempt(`RemovePodSandbox ${p.id}`, () =>
        cri.runtime('RemovePodSandbox', { pod_sandbox_id: p.id }, opts),
      );
    }
  } finally {
    cri.close();
  }
}

/** Shim socket addresses recorded in task bundles (`<state>/io.containerd.runtime.v2.task/<ns>/<id>/address`). */
function shimSockets(stateDir: string): string[] {
  const tasks = join(stateDir, 'io.containerd.runtime.v2.task');
  const out: string[] = [];
  try {
    for (const ns of readdirSync(tasks)) {
      for (const id of readdirSync(join(tasks, ns))) {
        try {
          const addr = readFileSync(join(tasks, ns, id, 'address'), 'utf8').trim();
          if (addr.startsWith('unix://')) out.push(addr.slice('unix://'.length));
        } catch {
          // bundle without a live shim
        }
      }
    }
  } catch {
    // no tasks dir
  }
  return out;
}

/** `runc delete --force` every container in our private runc root (kills it and frees its cgroup). */
async function deleteRuncContainers(runcRoot: string, warnings: string[]): Promise<void> {
  const runc = findBinary('runc');
  if (!runc || !existsSync(runcRoot)) return;
  for (const ns of await readdir(runcRoot)) {
    const root = join(runcRoot, ns);
    const list = await runCommand([runc, '--root', root, 'list', '-q']);
    for (const id of list.stdout.split('\n').filter(Boolean)) {
      const del = await runCommand([runc, '--root', root, 'delete', '--force', id]);
      if (del.code !== 0) warnings.push(`runc delete ${id}: ${del.stderr.trim()}`);
    }
  }
}

/** containerd processes of this sandbox: those started with its config file. */
function containerdPids(configPath: string): number[] {
  return findProcessesWithArg(configPath).map((p) => p.pid);
}

/** Run the full teardown; throws {@link NodeSandboxLeakError} if anything is left. */
export async function stopSandbox({ layout: L, containerdPid, netns }: SandboxTeardownInput): Promise<void> {
  const warnings: string[] = [];
  const step = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (e) {
      warnings.push(`${what}: ${(e as Error).message}`);
    }
  };
  // Identify containerd by its argv, never by a PID alone: a PID may have been reused.
  const daemons = containerdPids(L.configPath);
  if (containerdPid !== undefined && !daemons.includes(containerdPid) && isAlive(containerdPid)) {
    warnings.push(`pid ${containerdPid} is no longer this sandbox's containerd; not signalled`);
  }
  if (daemons.length) await step('remove pods via CRI', () => removePodsViaCri(L.socketPath, warnings));
  const sockets = shimSockets(L.stateDir);
  if (daemons.length) {
    const left = await killPids(daemons, { signal: 'SIGTERM', graceMs: 5_000 });
    if (left.length) warnings.push(`containerd ${left.join(', ')} survived SIGKILL`);
  }
  await step('runc delete', () => deleteRuncContainers(L.runcRoot, warnings));
  // Shims carry `-address <our socket>` in their argv: that identifies exactly this sandbox's
  // shims. Their descendants (container processes that survived runc) go first.
  const shims = findProcessesWithArg(L.socketPath).map((p) => p.pid);
  const children = descendantsOf(shims).map((p) => p.pid);
  if (children.length) await killPids(children, { signal: 'SIGKILL' });
  if (shims.length) await killPids(shims, { signal: 'SIGTERM', graceMs: 2_000 });
  for (const sock of sockets) await rm(sock, { force: true }).catch(() => {});
  const stuck = await unmountUnder(L.rootDir);
  if (netns) await step(`delete netns ${netns.name}`, () => netns.stop());
  if (stuck.length === 0)
    await step('remove temp dir', () => rm(L.rootDir, { recursive: true, force: true }));
  await step('remove CNI result cache', async () => {
    if (!existsSync(CNI_RESULT_CACHE)) return;
    for (const f of await readdir(CNI_RESULT_CACHE)) {
      if (f.startsWith(`${L.networkName}-`)) await rm(join(CNI_RESULT_CACHE, f), { force: true });
    }
  });

  const leaks: string[] = [];
  const procs = findProcessesWithArg(L.rootDir, true);
  if (procs.length) leaks.push(...procs.map((p) => `process ${p.pid}: ${p.argv.join(' ')}`));
  leaks.push(...mountsUnder(L.rootDir).map((m) => `mount ${m}`));
  if (existsSync(L.rootDir)) leaks.push(`directory ${L.rootDir}`);
  if (netns && existsSync(netns.path)) leaks.push(`netns ${netns.name}`);
  leaks.push(...sockets.filter((p) => existsSync(p)).map((p) => `shim socket ${p}`));
  if (leaks.length) throw new NodeSandboxLeakError(leaks, warnings);
}

/**
 * Tear down sandboxes whose owning test process is gone (e.g. a worker killed by a timeout):
 * every `<tmp>/nodeagent-sbx-*` whose `owner.json` names a dead PID, or that has no owner file
 * and is older than a minute. Sandboxes of live processes are never touched.
 * @returns the temp roots cleaned.
 */
export async function cleanupStaleNodeSandboxes(tmpRoot = tmpdir()): Promise<string[]> {
  const cleaned: string[] = [];
  for (const entry of await readdir(tmpRoot)) {
    if (!entry.startsWith(SANDBOX_DIR_PREFIX)) continue;
    const layout = sandboxLayout(join(tmpRoot, entry));
    let owner: SandboxOwner | undefined;
    try {
      owner = JSON.parse(readFileSync(layout.ownerFile, 'utf8')) as SandboxOwner;
    } catch {
      const ageMs = Date.now() - statSync(layout.rootDir).mtimeMs;
      if (ageMs < 60_000) continue; // probably being created right now
    }
    if (owner && (owner.ownerPid === process.pid || isAlive(owner.ownerPid))) continue;
    const netnsName = owner?.netnsName;
    const netns: NetnsHandle | undefined = netnsName
      ? { name: netnsName, path: `/run/netns/${netnsName}`, stop: () => deleteNetnsByName(netnsName) }
      : undefined;
    await stopSandbox({ layout, containerdPid: undefined, netns });
    cleaned.push(layout.rootDir);
  }
  return cleaned;
}
