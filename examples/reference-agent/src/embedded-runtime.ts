/**
 * The in-process runtime of the embedded defaults: `FakeRuntime` from
 * `@nodeagent/cri/testing` with a busybox-like image preloaded (and pullable) and a few
 * behaviour rules so shell commands act roughly as they would: a command ending in `exit N`
 * (or `false`/`true`) exits at once with that code, one ending in `sleep N` (N ≤ 600) exits
 * with 0 after N seconds, anything else runs until it is stopped. `ExecSync` (exec probes) plays
 * the container's script on its files: `touch F`, `rm [-f] F` and `sleep N` steps happen at the
 * time they would since the container started (`echo … > F` creates `F` too; a foreground
 * `httpd -f` step blocks the rest), so `cat F` / `test -e F` / `ls F` succeed only while `F`
 * exists; `true`, `false` and `exit N` exit as they say; `echo` prints its words (also through
 * `kubectl exec`, over the fake's streaming server); other commands succeed silently (the
 * fake's default). A container's own `echo` steps go to its log ({@link EmbeddedContainerOutput}).
 *
 * Pod IPs come from a loopback sub-range (`127.88.0.0/16` by default), which Linux routes
 * locally without any setup, and every container really listens on its declared TCP
 * `containerPort`s while it runs ({@link EmbeddedContainerPorts}), so `httpGet`, `tcpSocket`
 * and `grpc` probes reach it from the agent as they reach a real pod.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { type Clock, definedFields, type Logger, noopLogger, realClock } from '@nodeagent/core';
import type { CreateContainerRequest } from '@nodeagent/cri';
import { type BehaviourRule, type ExecResult, type FakeImage, FakeRuntime } from '@nodeagent/cri/testing';
import { EmbeddedContainerOutput } from './embedded-container-output.js';
import { EmbeddedContainerPorts } from './embedded-container-ports.js';

/** The busybox-like image the embedded runtime has (the same reference as the real-node sandbox's). */
export const EMBEDDED_BUSYBOX_IMAGE = 'registry.local/busybox:latest';
/** The sandbox image it has. */
export const EMBEDDED_PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** The embedded pod IP range: loopback addresses, routed locally by Linux without root. */
export const EMBEDDED_POD_CIDR = '127.88.0.0/16';
const MAX_SLEEP_SECONDS = 600;

function escapeTail(word: string): RegExp {
  // The last shell command of the argv (after `;`, `&&`, `||` or at the start).
  return new RegExp(`(^|[;&|]\\s*|^sh -c\\s+)${word}\\s*$`);
}

/** The behaviour rules described in the module comment, in match order. */
export function busyboxLikeBehaviours(): BehaviourRule[] {
  const rules: BehaviourRule[] = [];
  rules.push({ match: { command: escapeTail('true') }, behaviour: { crashOnStart: true, exitCode: 0 } });
  rules.push({ match: { command: escapeTail('false') }, behaviour: { crashOnStart: true, exitCode: 1 } });
  for (let code = 0; code <= 255; code++) {
    rules.push({
      match: { command: escapeTail(`exit ${code}`) },
      behaviour: { crashOnStart: true, exitCode: code },
    });
  }
  for (let s = 1; s <= MAX_SLEEP_SECONDS; s++) {
    rules.push({
      match: { command: escapeTail(`sleep ${s}`) },
      behaviour: { exitAfterMs: s * 1000, exitCode: 0 },
    });
  }
  return rules;
}

/** The shell steps of `script` (split at `;`, `&&`, `||` and newlines), trimmed. */
function steps(script: string): string[] {
  return script
    .split(/;|&&|\|\||\n/)
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/**
 * The files `script` has created `elapsedMs` after it started: its `touch` and `rm` steps
 * played up to that time (each `sleep N` step takes N seconds).
 */
export function scriptFilesAt(script: string, elapsedMs: number): Set<string> {
  const files = new Set<string>();
  let at = 0;
  for (const step of steps(script)) {
    const words = step.split(/\s+/);
    const redirect = /(?:^|[^0-9&])>{1,2}\s*(\S+)\s*$/.exec(step)?.[1];
    if (redirect !== undefined && redirect !== '/dev/null') files.add(redirect);
    if (words[0] === 'httpd' && words.includes('-f')) break; // foreground: the rest never runs
    if (words[0] === 'sleep' && words.length === 2) {
      at += Number(words[1]) * 1000;
      if (!(at <= elapsedMs)) break;
    } else if (words[0] === 'touch') {
      for (const f of words.slice(1)) files.add(f);
    } else if (words[0] === 'rm') {
      for (const f of words.slice(1)) if (!f.startsWith('-')) files.delete(f);
    }
  }
  return files;
}

const ok = (stdout = ''): ExecResult => ({ stdout, stderr: '', exitCode: 0, durationMs: 0 });
const fail = (exitCode: number, stderr = ''): ExecResult => ({ stdout: '', stderr, exitCode, durationMs: 0 });

/** The words of a simple command, split on blanks outside quotes, the quotes removed. */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote = '';
  for (const c of command) {
    if (quote !== '') {
      if (c === quote) quote = '';
      else word = (word ?? '') + c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * Splits an `sh -c` script into simple commands and the operator before each (`;`, `&&`,
 * `||`, or a newline as `;`), outside single and double quotes.
 */
function splitScript(script: string): Array<{ readonly op: ';' | '&&' | '||'; readonly words: string[] }> {
  const out: Array<{ op: ';' | '&&' | '||'; words: string[] }> = [];
  let op: ';' | '&&' | '||' = ';';
  let current = '';
  let quote = '';
  const flush = (next: ';' | '&&' | '||') => {
    const words = shellWords(current);
    if (words.length > 0) out.push({ op, words });
    current = '';
    op = next;
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i] as string;
    if (quote !== '') {
      if (c === quote) quote = '';
      current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      current += c;
    } else if (c === ';' || c === '\n') flush(';');
    else if ((c === '&' || c === '|') && script[i + 1] === c) {
      flush(c === '&' ? '&&' : '||');
      i++;
    } else current += c;
  }
  flush(';');
  return out;
}

/**
 * What the embedded runtime's `ExecSync` answers to `argv` in a container whose files are
 * `files`. An `sh -c` script runs its simple commands in order with `;`, `&&` and `||` as sh
 * does (output concatenated, the last command's exit code, `exit N` stops the script).
 */
export function busyboxLikeExec(argv: readonly string[], files: ReadonlySet<string>): ExecResult {
  if (!(argv[0] === 'sh' && argv[1] === '-c' && argv.length === 3)) return simpleExec([...argv], files);
  let stdout = '';
  let stderr = '';
  let exitCode = 0;
  for (const { op, words } of splitScript(argv[2] ?? '')) {
    if ((op === '&&' && exitCode !== 0) || (op === '||' && exitCode === 0)) continue;
    const r = simpleExec(words, files);
    stdout += r.stdout;
    stderr += r.stderr;
    exitCode = r.exitCode;
    if (words[0] === 'exit') break;
  }
  return { stdout, stderr, exitCode, durationMs: 0 };
}

/** One simple command of the embedded runtime's busybox-like shell. */
function simpleExec(words: readonly string[], files: ReadonlySet<string>): ExecResult {
  const [cmd, ...rest] = words;
  const path = rest.filter((w) => !w.startsWith('-')).at(-1) ?? '';
  switch (cmd) {
    case 'true':
      return ok();
    case 'echo':
      return words.slice(1).some((w) => /^[<>|]/.test(w)) ? ok() : ok(`${echoArgs(rest)}\n`);
    case 'false':
      return fail(1);
    case 'exit':
      return Number(rest[0] ?? 0) === 0 ? ok() : fail(Number(rest[0]));
    case 'cat':
      return files.has(path) ? ok() : fail(1, `cat: can't open '${path}': No such file or directory\n`);
    case 'ls':
      return files.has(path) ? ok(`${path}\n`) : fail(1, `ls: ${path}: No such file or directory\n`);
    case 'test':
    case '[':
      return files.has(path.replace(/^\]$/, rest.at(-2) ?? '')) ? ok() : fail(1);
    default:
      return ok();
  }
}

/** The text `echo` prints for its words, shell quotes removed. */
function echoArgs(words: readonly string[]): string {
  return words.map((w) => w.replace(/^(['"])(.*)\1$/, '$2')).join(' ');
}

/**
 * What the embedded runtime does with an image it does not have (`--embedded-image-policy`, an
 * agent-only flag): `simulate` pulls any reference as a simulated image ({@link simulatedImage});
 * `known-only` pulls only the preloaded images, anything else fails as a registry miss
 * (`ErrImagePull`, then `ImagePullBackOff`).
 */
export type EmbeddedImagePolicy = 'simulate' | 'known-only';

/**
 * The simulated image the embedded runtime pulls for `normalizedRef` under the `simulate`
 * policy: its ID and repo digest are SHA-256s of the reference (stable across runs, different
 * per reference), its size 5–100 MiB derived from the same hash. The container runs its command
 * as every embedded container does (until stopped, unless the busybox-like rules match).
 */
export function simulatedImage(normalizedRef: string): FakeImage {
  const hash = createHash('sha256').update(`nodeagent-simulated-image/${normalizedRef}`).digest();
  const hex = hash.toString('hex');
  const repo = normalizedRef.replace(/@.*$/, '').replace(/:[^/:]+$/, '');
  const mib = 5 + (hash.readUInt32BE(0) % 96);
  return {
    ref: normalizedRef,
    id: `sha256:${createHash('sha256').update(hex).digest('hex')}`,
    repoDigests: [`${repo}@sha256:${hex}`],
    sizeBytes: mib * 1024 * 1024,
  };
}

/** Options of {@link startEmbeddedRuntime}. */
export interface EmbeddedRuntimeOptions {
  /** Images it does not have: simulated, or a pull failure. @default 'simulate' */
  readonly imagePolicy?: EmbeddedImagePolicy | undefined;
  /**
   * Pod IP range. Only addresses in `127.0.0.0/8` are reachable from the agent (a warning is
   * logged otherwise): network probes and connections to pods need them. @default '127.88.0.0/16'
   */
  readonly podCidr?: string | undefined;
  /** @default realClock */
  readonly clock?: Clock;
  /** Warnings about container ports that cannot listen. @default noopLogger */
  readonly logger?: Logger;
}

/** The embedded runtime: the fake, its endpoint, and `stop()` (closes the containers' ports, then the fake). */
export interface EmbeddedRuntime {
  /** The fake runtime. */
  readonly runtime: FakeRuntime;
  /** Its CRI endpoint (`unix:///…`). */
  readonly endpoint: string;
  /** Closes every container port, then stops the runtime. */
  stop(): Promise<void>;
}

/** Starts the fake runtime on a unix socket in a fresh temp directory, with its containers' ports. */
export async function startEmbeddedRuntime(options: EmbeddedRuntimeOptions = {}): Promise<EmbeddedRuntime> {
  const images = [{ ref: EMBEDDED_BUSYBOX_IMAGE }, { ref: EMBEDDED_PAUSE_IMAGE }, { ref: 'pause' }];
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? noopLogger;
  const podCidr = options.podCidr ?? EMBEDDED_POD_CIDR;
  if (!podCidr.startsWith('127.')) {
    logger.warn(
      { podCidr },
      'Embedded pod IPs outside 127.0.0.0/8 are not routed: httpGet/tcpSocket/grpc probes and connections to pods will fail',
    );
  }
  const runtime: FakeRuntime = new FakeRuntime({
    images,
    registryImages: images,
    ...((options.imagePolicy ?? 'simulate') === 'simulate' ? { registryResolver: simulatedImage } : {}),
    behaviours: busyboxLikeBehaviours(),
    defaultExec: (argv, containerId) =>
      busyboxLikeExec(argv, containerFiles(runtime, containerId, clock.now())),
    podCidr,
    ...definedFields({ clock: options.clock }),
  });
  const ports = new EmbeddedContainerPorts({
    runtime,
    files: (id) => containerFiles(runtime, id, clock.now()),
    docroot: (id) => httpdDocroot(containerScript(runtime, id)?.script ?? ''),
    logger,
  });
  ports.start();
  const output = new EmbeddedContainerOutput({
    runtime,
    script: (id) => containerScript(runtime, id)?.script,
    clock,
    logger,
  });
  output.start();
  try {
    await runtime.start();
  } catch (error) {
    output.stop();
    await ports.stop();
    throw error;
  }
  return {
    runtime,
    endpoint: runtime.endpoint,
    stop: async () => {
      output.stop();
      await ports.stop();
      await runtime.stop();
    },
  };
}

/**
 * The HTTP document root of a script: the `-h DIR` of its `httpd` step (busybox httpd), else
 * `/` (the container's working directory).
 */
export function httpdDocroot(script: string): string {
  for (const step of steps(script)) {
    const words = step.split(/\s+/);
    if (words[0] !== 'httpd') continue;
    const at = words.indexOf('-h');
    const dir = at === -1 ? undefined : words[at + 1];
    if (dir !== undefined) return dir;
  }
  return '/';
}

/** The files of container `id` at `nowMs`: its script (from its CreateContainer call) played since it started. */
function containerFiles(runtime: FakeRuntime, id: string, nowMs: number): Set<string> {
  const found = containerScript(runtime, id);
  if (found === undefined) return new Set();
  return scriptFilesAt(found.script, nowMs - found.startedAtMs);
}

/** The shell script container `id` runs (from its CreateContainer call) and when it started, ms; undefined before it starts. */
export function containerScript(
  runtime: FakeRuntime,
  id: string,
): { readonly script: string; readonly startedAtMs: number } | undefined {
  const status = runtime.containers().find((c) => c.id === id);
  if (status === undefined || status.startedAt === 0n) return undefined;
  const uid = status.labels['io.kubernetes.pod.uid'];
  const call = runtime
    .calls('CreateContainer')
    .map((c) => c.request as CreateContainerRequest)
    .findLast(
      (r) =>
        r.config?.metadata?.name === status.metadata?.name &&
        r.config?.metadata?.attempt === status.metadata?.attempt &&
        r.config?.labels['io.kubernetes.pod.uid'] === uid,
    );
  const argv = [...(call?.config?.command ?? []), ...(call?.config?.args ?? [])];
  const script = argv[0] === 'sh' && argv[1] === '-c' ? argv.slice(2).join(' ') : argv.join(' ');
  return { script, startedAtMs: Number(status.startedAt / 1_000_000n) };
}
