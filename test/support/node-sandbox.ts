/**
 * A whole test node on one machine: a private containerd (CRI v1) with a CNI bridge, running
 * inside a fresh network namespace, with a local busybox image as both workload and sandbox image.
 * Nothing it starts can reach the host's network, and `stop()` removes every process, mount,
 * namespace and file it created — or throws naming what leaked.
 *
 * @example
 * ```ts
 * const node = await startNodeSandbox();
 * try {
 *   const cri = await connectCri(node.criEndpoint);
 *   console.log(await cri.runtime('Version'));
 *   cri.close();
 * } finally {
 *   await node.stop();
 * }
 * ```
 * @module
 */
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUSYBOX_IMAGE_REF, writeBusyboxImage } from './busybox-image.js';
import { type CommandResult, requireBinary, runChecked, runCommand } from './command.js';
import { bridgeConflist, renderContainerdConfig } from './containerd-config.js';
import { connectCri, criProtoAvailable } from './cri-grpc.js';
import { createNetns, type Netns, type NetnsExecOptions } from './netns.js';
import { CNI_BIN_DIR } from './node-paths.js';
import { SANDBOX_DIR_PREFIX, type SandboxOwner, sandboxLayout } from './node-sandbox-layout.js';
import { stopSandbox } from './node-sandbox-stop.js';
import { isAlive, killPids } from './procfs.js';

/** Options for {@link startNodeSandbox}. */
export interface NodeSandboxOptions {
  /** Pod subnet (host-local IPAM range). Pass distinct ones when joining several nodes. @default `10.88.<X>.0/24`, X chosen per sandbox */
  readonly podCidr?: string;
  /** Prefix of the node's network namespace name (letters, digits, `_`, `.`). @default 'nodesbx' */
  readonly name?: string;
  /** containerd log level. @default 'info' */
  readonly logLevel?: string;
  /** Image reference of the imported busybox image. @default BUSYBOX_IMAGE_REF */
  readonly imageRef?: string;
  /** How long to wait for the CRI socket to answer, in ms. @default 30000 */
  readonly startTimeoutMs?: number;
  /** Snapshotter; by default overlayfs when a probe overlay mount works here, else native. @default auto */
  readonly snapshotter?: 'overlayfs' | 'native';
}

/** A running node sandbox. */
export interface NodeSandbox {
  /** CRI endpoint: `unix:///<tmp>/containerd.sock`. */
  readonly criEndpoint: string;
  /** Path of the containerd gRPC socket. */
  readonly criSocketPath: string;
  /** The node's network namespace (containerd, CNI bridge and pod veths live in it). */
  readonly netns: Netns;
  /** Pod subnet of the CNI bridge. */
  readonly podCidr: string;
  /** The imported busybox image, also the sandbox (pause) image. */
  readonly imageRef: string;
  /** Snapshotter in use: `overlayfs`, or `native` when overlay mounts fail here. */
  readonly snapshotter: 'overlayfs' | 'native';
  /** Temp root holding all state of this sandbox (removed by `stop()`). */
  readonly rootDir: string;
  /** A directory for pod `log_directory` values (under `rootDir`). */
  readonly podLogRoot: string;
  /** containerd's log file (under `rootDir`). */
  readonly containerdLogPath: string;
  /** PID of the current containerd process (changes after {@link NodeSandbox.startContainerd}). */
  readonly containerdPid: number;
  /**
   * Stops containerd by its PID (SIGTERM, SIGKILL after 5 s) and leaves it down, so the CRI
   * socket stops answering; containers keep running under their shims, as on a real node.
   */
  stopContainerd(): Promise<void>;
  /** Starts containerd again with the same config and state, and waits until CRI answers. */
  startContainerd(): Promise<void>;
  /** Run `argv` inside the node namespace (no shell); resolves for any exit code. */
  run(argv: readonly string[], opts?: NetnsExecOptions): Promise<CommandResult>;
  /** Run `ctr -a <socket> -n k8s.io <argv…>`; returns stdout, throws `CommandFailedError` on failure. */
  ctr(argv: readonly string[]): Promise<string>;
  /**
   * Stop and remove all pods, stop containerd (SIGTERM, then SIGKILL), kill this sandbox's shims
   * and containers, unmount, delete the netns and temp dirs. Idempotent; throws
   * `NodeSandboxLeakError` if anything it created is still there afterwards.
   */
  stop(): Promise<void>;
}

/** Thrown when the sandbox cannot start; carries the tail of containerd's log. */
export class NodeSandboxStartError extends Error {
  override readonly name = 'NodeSandboxStartError';
}

/** containerd namespace used by the CRI plugin. */
export const CRI_NAMESPACE = 'k8s.io';
let sandboxCounter = 0;

/** Can overlayfs be mounted under `dir`? (Not on every filesystem / kernel.) */
async function overlayWorks(dir: string): Promise<boolean> {
  const base = join(dir, 'overlay-probe');
  const [lower, upper, work, merged] = ['lower', 'upper', 'work', 'merged'].map((d) => join(base, d)) as [
    string,
    string,
    string,
    string,
  ];
  await Promise.all([lower, upper, work, merged].map((d) => mkdir(d, { recursive: true })));
  const opts = `lowerdir=${lower},upperdir=${upper},workdir=${work}`;
  const mount = await runCommand(['mount', '-t', 'overlay', 'overlay', '-o', opts, merged]);
  if (mount.code === 0) await runCommand(['umount', merged]);
  await rm(base, { recursive: true, force: true });
  return mount.code === 0;
}

function tail(path: string, lines = 40): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no containerd log)';
  }
}

function defaultPodCidr(): string {
  sandboxCounter += 1;
  // Sandboxes sit in separate namespaces, so equal subnets do not clash; spreading them only
  // matters when a test joins several nodes, and such tests should pass podCidr explicitly.
  const x = ((process.pid % 200) + sandboxCounter * 37) % 254 || 254;
  return `10.88.${x}.0/24`;
}

/** Start a private containerd with CRI + CNI inside a new network namespace. */
export async function startNodeSandbox(opts: NodeSandboxOptions = {}): Promise<NodeSandbox> {
  const podCidr = opts.podCidr ?? defaultPodCidr();
  if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(podCidr)) {
    throw new NodeSandboxStartError(`invalid podCidr ${JSON.stringify(podCidr)}`);
  }
  const containerd = requireBinary('containerd');
  const ctrBin = requireBinary('ctr');
  const L = sandboxLayout(await mkdtemp(join(tmpdir(), SANDBOX_DIR_PREFIX)));
  const { rootDir, socketPath, logPath } = L;
  await Promise.all(
    [L.containerdRoot, L.stateDir, L.tmpDir, L.cniConfDir, L.ipamDir, L.runcRoot, L.optDir, L.podLogRoot].map(
      (d) => mkdir(d, { recursive: true }),
    ),
  );
  const imageRef = opts.imageRef ?? BUSYBOX_IMAGE_REF;
  let netns: Netns | undefined;
  let pid: number | undefined;

  let stopping: Promise<void> | undefined;
  const stopOnce = () => {
    stopping ??= stopSandbox({ layout: L, containerdPid: pid, netns });
    return stopping;
  };

  try {
    netns = await createNetns(opts.name ?? 'nodesbx');
    const owner: SandboxOwner = { ownerPid: process.pid, netnsName: netns.name };
    await writeFile(L.ownerFile, JSON.stringify(owner));
    const snapshotter = opts.snapshotter ?? ((await overlayWorks(L.tmpDir)) ? 'overlayfs' : 'native');
    const defaults = await runChecked([containerd, 'config', 'default']);
    await writeFile(
      L.configPath,
      renderContainerdConfig(defaults, {
        rootDir: L.containerdRoot,
        stateDir: L.stateDir,
        tempDir: L.tmpDir,
        socketPath,
        cniConfDir: L.cniConfDir,
        cniBinDir: CNI_BIN_DIR,
        sandboxImage: imageRef,
        snapshotter,
        runcRoot: L.runcRoot,
        optDir: L.optDir,
        logLevel: opts.logLevel ?? 'info',
      }),
    );
    await writeFile(
      join(L.cniConfDir, '10-nodeagent-bridge.conflist'),
      bridgeConflist({ networkName: L.networkName, bridgeName: 'cni0', podCidr, ipamDataDir: L.ipamDir }),
    );
    const imageBuild = writeBusyboxImage(L.imagePath, { ref: imageRef });

    const nodeNetns = netns;
    const launch = async (): Promise<void> => {
      const logFd = openSync(logPath, 'a');
      const child = nodeNetns.spawn([containerd, '--config', L.configPath], {
        stdio: ['ignore', logFd, logFd],
      });
      closeSync(logFd);
      pid = child.pid;
      if (pid === undefined) throw new NodeSandboxStartError('containerd did not start');
      await waitForCri(socketPath, pid, opts.startTimeoutMs ?? 30_000, logPath);
    };
    await launch();
    await imageBuild;
    const ctr = (argv: readonly string[]) =>
      runChecked([ctrBin, '-a', socketPath, '-n', CRI_NAMESPACE, ...argv], { timeoutMs: 60_000 });
    await ctr(['images', 'import', '--snapshotter', snapshotter, L.imagePath]);
    return {
      criEndpoint: `unix://${socketPath}`,
      criSocketPath: socketPath,
      netns: nodeNetns,
      podCidr,
      imageRef,
      snapshotter,
      rootDir,
      podLogRoot: L.podLogRoot,
      containerdLogPath: logPath,
      get containerdPid() {
        return pid ?? -1;
      },
      async stopContainerd() {
        if (pid !== undefined && isAlive(pid)) await killPids([pid], { graceMs: 5_000 });
      },
      async startContainerd() {
        if (pid !== undefined && isAlive(pid)) return;
        await launch();
      },
      run: (argv, runOpts) => nodeNetns.exec(argv, runOpts),
      ctr,
      stop: stopOnce,
    };
  } catch (e) {
    const log = tail(logPath);
    await stopOnce().catch(() => {});
    if (e instanceof NodeSandboxStartError) throw e;
    throw new NodeSandboxStartError(
      `node sandbox failed to start: ${(e as Error).message}\n--- containerd log ---\n${log}`,
      { cause: e },
    );
  }
}

/** Poll until the CRI (or, without the proto, the containerd API) answers on `socketPath`. */
async function waitForCri(
  socketPath: string,
  pid: number,
  timeoutMs: number,
  logPath: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const useCri = criProtoAvailable();
  const cri = useCri ? await connectCri(`unix://${socketPath}`) : undefined;
  let lastError = 'socket not created';
  try {
    while (Date.now() < deadline) {
      if (!isAlive(pid)) {
        throw new NodeSandboxStartError(
          `containerd (pid ${pid}) exited during startup\n--- containerd log ---\n${tail(logPath)}`,
        );
      }
      // The CRI plugin failing to load is final: containerd keeps running without it.
      const criFailure = /failed to load plugin io\.containerd\.grpc\.v1\.cri.*/.exec(tail(logPath, 400));
      if (criFailure)
        throw new NodeSandboxStartError(`containerd could not load its CRI plugin: ${criFailure[0]}`);
      if (existsSync(socketPath)) {
        try {
          if (cri) {
            const v = await cri.runtime<{ runtime_api_version: string }>('Version', {}, { timeoutMs: 2_000 });
            if (v.runtime_api_version === 'v1') return;
            lastError = `unexpected runtime_api_version ${v.runtime_api_version}`;
          } else {
            const r = await runCommand(['ctr', '-a', socketPath, 'plugins', 'ls'], { timeoutMs: 5_000 });
            if (r.code === 0 && /io\.containerd\.grpc\.v1\s+cri\s+\S+\s+ok/.test(r.stdout)) return;
            lastError = r.stderr.trim() || 'cri plugin not ok yet';
          }
        } catch (e) {
          lastError = (e as Error).message;
        }
      }
      await sleep(100);
    }
  } finally {
    cri?.close();
  }
  throw new NodeSandboxStartError(
    `containerd CRI did not answer on ${socketPath} within ${timeoutMs} ms (last error: ${lastError})\n` +
      `--- containerd log ---\n${tail(logPath)}`,
  );
}

export { cleanupStaleNodeSandboxes, NodeSandboxLeakError } from './node-sandbox-stop.js';
