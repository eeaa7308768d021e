/**
 * Network namespaces for real-node tests: create, run programs inside, link with veth pairs,
 * clean up by PID and name, and check for leaks.
 *
 * Safety rule: veth pairs only ever join two namespaces created here; no helper moves an interface
 * into, or routes towards, the host's own network namespace.
 *
 * @example
 * ```ts
 * const a = await createNetns('demo');
 * const b = await createNetns('demo');
 * await createVethPair(a, b, { addressA: '10.9.0.1/24', addressB: '10.9.0.2/24' });
 * const { code } = await a.exec(['ping', '-c1', '-W1', '10.9.0.2']);
 * await Promise.all([a.stop(), b.stop()]);
 * expect(await listLeakedNetns('demo')).toEqual([]);
 * ```
 * @module
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CommandFailedError,
  type CommandResult,
  type RunCommandOptions,
  requireBinary,
  runCommand,
} from './command.js';
import { isAlive } from './procfs.js';

/** Options for {@link Netns.exec}. */
export interface NetnsExecOptions {
  /** Text written to stdin. @default none */
  readonly input?: string | Buffer;
  /** SIGKILL the command after this many milliseconds. @default 30000 */
  readonly timeoutMs?: number;
  /** Environment. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** Options for {@link Netns.spawn}. */
export interface NetnsSpawnOptions {
  /** stdio of the child. @default ['ignore', 'pipe', 'pipe'] */
  readonly stdio?: StdioOptions;
  /** Environment. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Working directory. @default process.cwd() */
  readonly cwd?: string;
}

/** A network namespace created by {@link createNetns}. */
export interface Netns {
  /** Namespace name as listed by `ip netns list`. */
  readonly name: string;
  /** Bind-mount path of the namespace: `/run/netns/<name>`. */
  readonly path: string;
  /**
   * Run `argv` inside the namespace (via `nsenter --net=<path>`, no shell) and collect its output.
   * Resolves for any exit code; see {@link Netns.execChecked}.
   */
  exec(argv: readonly string[], opts?: NetnsExecOptions): Promise<CommandResult>;
  /** Like {@link Netns.exec} but returns stdout and throws {@link CommandFailedError} on failure. */
  execChecked(argv: readonly string[], opts?: NetnsExecOptions): Promise<string>;
  /**
   * Start a long-running program inside the namespace, in its own process group. It is tracked:
   * {@link Netns.stop} sends SIGTERM to its group, then SIGKILL after 3 s.
   */
  spawn(argv: readonly string[], opts?: NetnsSpawnOptions): ChildProcess;
  /**
   * Kill tracked processes (by PID/process group), delete this namespace's veth ends, then delete
   * the namespace. Idempotent. Rejects if the namespace still exists afterwards.
   */
  stop(): Promise<void>;
}

/** One end of a veth pair. */
export interface VethEnd {
  /** The namespace holding this end. */
  readonly netns: Netns;
  /** Interface name inside that namespace. */
  readonly name: string;
}

/** A veth pair between two test namespaces, made by {@link createVethPair}. */
export interface VethPair {
  /** End in the first namespace. */
  readonly a: VethEnd;
  /** End in the second namespace. */
  readonly b: VethEnd;
  /** Delete the pair (deleting one end removes both). Idempotent. */
  delete(): Promise<void>;
}

/** Options for {@link createVethPair}. */
export interface VethPairOptions {
  /** Name of the end in `a`. @default `veth<N>` with N counting veths made in `a` */
  readonly nameA?: string;
  /** Name of the end in `b`. @default `veth<N>` with N counting veths made in `b` */
  readonly nameB?: string;
  /** CIDR address for the `a` end, e.g. `10.9.0.1/24`. @default none */
  readonly addressA?: string;
  /** CIDR address for the `b` end. @default none */
  readonly addressB?: string;
  /** Bring both ends up. @default true */
  readonly up?: boolean;
}

/** Thrown when a namespace, veth or argument is invalid or cannot be made. */
export class NetnsError extends Error {
  override readonly name = 'NetnsError';
}

const NETNS_DIR = '/run/netns';
const PREFIX_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.]{0,39}$/;
const IFNAME_RE = /^[a-zA-Z0-9_.-]{1,15}$/;
let counter = 0;

interface NetnsInternals {
  readonly vethCount: { n: number };
  readonly veths: Set<string>;
}
/** Namespaces made by this module: only these may be joined by veths. */
const internals = new WeakMap<Netns, NetnsInternals>();

function ipArgv(): string {
  return requireBinary('ip');
}

/** `ip netns list` names (without the `(id: N)` suffix). */
async function listNetnsNames(): Promise<string[]> {
  const r = await runCommand([ipArgv(), 'netns', 'list']);
  if (r.code !== 0) throw new CommandFailedError(['ip', 'netns', 'list'], r);
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

/**
 * Create a fresh network namespace named `<prefix>-<pid base36>-<counter base36>`, with `lo` up.
 * @param prefix letters, digits, `_` or `.`, at most 40 characters; use one prefix per test file.
 */
export async function createNetns(prefix: string): Promise<Netns> {
  if (!PREFIX_RE.test(prefix)) {
    throw new NetnsError(`invalid netns prefix ${JSON.stringify(prefix)}: use [a-zA-Z0-9_.], <= 40 chars`);
  }
  const ip = ipArgv();
  const nsenter = requireBinary('nsenter');
  let name = '';
  for (let attempt = 0; ; attempt++) {
    counter += 1;
    name = `${prefix}-${process.pid.toString(36)}-${counter.toString(36)}`;
    const r = await runCommand([ip, 'netns', 'add', name]);
    if (r.code === 0) break;
    // A leftover of an earlier run with the same PID: try the next counter value.
    if (!/exists/i.test(r.stderr) || attempt >= 20) {
      throw new NetnsError(`ip netns add ${name} failed: ${r.stderr.trim()}`);
    }
  }
  const path = `${NETNS_DIR}/${name}`;
  const tracked = new Set<ChildProcess>();
  const own: NetnsInternals = { vethCount: { n: 0 }, veths: new Set() };
  let stopping: Promise<void> | undefined;

  const wrap = (argv: readonly string[]) => {
    if (argv.length === 0) throw new NetnsError('argv must not be empty');
    return [nsenter, `--net=${path}`, '--', ...argv];
  };
  const exec = (argv: readonly string[], opts: NetnsExecOptions = {}) => {
    const runOpts: RunCommandOptions = {
      ...(opts.input !== undefined ? { input: opts.input } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.env !== undefined ? { env: opts.env } : {}),
    };
    return runCommand(wrap(argv), runOpts);
  };

  const stopTracked = async () => {
    const live = [...tracked].filter(
      (c) => c.pid !== undefined && c.exitCode === null && c.signalCode === null,
    );
    const signalGroup = (c: ChildProcess, sig: NodeJS.Signals) => {
      try {
        process.kill(-(c.pid as number), sig);
      } catch {
        // group already gone
      }
    };
    for (const c of live) signalGroup(c, 'SIGTERM');
    const deadline = Date.now() + 3_000;
    while (live.some((c) => isAlive(c.pid as number)) && Date.now() < deadline) await sleep(20);
    // SIGKILL the whole group even if the leader exited: stragglers in the group die too.
    for (const c of live) signalGroup(c, 'SIGKILL');
    tracked.clear();
  };

  const netns: Netns = {
    name,
    path,
    exec,
    async execChecked(argv, opts) {
      const r = await exec(argv, opts);
      if (r.code !== 0) throw new CommandFailedError(argv, r);
      return r.stdout;
    },
    spawn(argv, opts = {}) {
      if (stopping) throw new NetnsError(`netns ${name} is stopped`);
      const [file, ...args] = wrap(argv);
      const child = spawn(file as string, args, {
        stdio: opts.stdio ?? ['ignore', 'pipe', 'pipe'],
        env: opts.env ?? process.env,
        detached: true,
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
      });
      tracked.add(child);
      child.once('exit', () => tracked.delete(child));
      return child;
    },
    stop() {
      stopping ??= (async () => {
        await stopTracked();
        for (const veth of own.veths) {
          // The peer's deletion may already have removed it: ignore "Cannot find device".
          await runCommand([ip, '-n', name, 'link', 'del', 'dev', veth]);
        }
        own.veths.clear();
        const del = await runCommand([ip, 'netns', 'delete', name]);
        if (del.code !== 0 && (await listNetnsNames()).includes(name)) {
          throw new NetnsError(`could not delete netns ${name}: ${del.stderr.trim()}`);
        }
      })();
      return stopping;
    },
  };
  internals.set(netns, own);
  try {
    await netns.execChecked([ip, 'link', 'set', 'lo', 'up']);
  } catch (e) {
    await netns.stop();
    throw e;
  }
  return netns;
}

/**
 * Create a veth pair with one end in `a` and the other in `b` (both made by {@link createNetns};
 * the host namespace is never involved), optionally assign addresses and bring both ends up.
 */
export async function createVethPair(a: Netns, b: Netns, opts: VethPairOptions = {}): Promise<VethPair> {
  const ia = internals.get(a);
  const ib = internals.get(b);
  if (!ia || !ib) throw new NetnsError('createVethPair only joins namespaces made by createNetns');
  if (a === b) throw new NetnsError('createVethPair needs two different namespaces');
  const nameA = opts.nameA ?? `veth${ia.vethCount.n++}`;
  const nameB = opts.nameB ?? `veth${ib.vethCount.n++}`;
  for (const n of [nameA, nameB]) {
    if (!IFNAME_RE.test(n)) throw new NetnsError(`invalid interface name ${JSON.stringify(n)} (<= 15 chars)`);
  }
  const ip = ipArgv();
  const run = async (argv: string[]) => {
    const r = await runCommand(argv);
    if (r.code !== 0) throw new CommandFailedError(argv, r);
  };
  // Created directly inside `a` with the peer placed straight into `b`: no end ever exists
  // in the host namespace, not even for a moment.
  await run([ip, '-n', a.name, 'link', 'add', nameA, 'type', 'veth', 'peer', 'name', nameB, 'netns', b.name]);
  ia.veths.add(nameA);
  ib.veths.add(nameB);
  let deleted: Promise<void> | undefined;
  const pair: VethPair = {
    a: { netns: a, name: nameA },
    b: { netns: b, name: nameB },
    delete() {
      deleted ??= (async () => {
        await runCommand([ip, '-n', a.name, 'link', 'del', 'dev', nameA]);
        ia.veths.delete(nameA);
        ib.veths.delete(nameB);
      })();
      return deleted;
    },
  };
  try {
    if (opts.addressA) await run([ip, '-n', a.name, 'addr', 'add', opts.addressA, 'dev', nameA]);
    if (opts.addressB) await run([ip, '-n', b.name, 'addr', 'add', opts.addressB, 'dev', nameB]);
    if (opts.up ?? true) {
      await run([ip, '-n', a.name, 'link', 'set', nameA, 'up']);
      await run([ip, '-n', b.name, 'link', 'set', nameB, 'up']);
    }
  } catch (e) {
    await pair.delete();
    throw e;
  }
  return pair;
}

/**
 * Names of existing namespaces made by {@link createNetns} with this prefix — after every
 * `stop()` this should be empty. By default only namespaces of this process (its PID is part
 * of the name) are listed, so parallel test workers using the same prefix do not interfere.
 */
export async function listLeakedNetns(
  prefix: string,
  opts: { anyProcess?: boolean } = {},
): Promise<string[]> {
  const start = opts.anyProcess ? `${prefix}-` : `${prefix}-${process.pid.toString(36)}-`;
  return (await listNetnsNames()).filter((n) => n.startsWith(start));
}

export { cleanupStaleNetns, deleteNetnsByName } from './netns-stale.js';
