/**
 * Where a node sandbox keeps everything, derived from its temp root alone — so a later process can
 * find and clean up a sandbox whose owner died.
 * @module
 */
import { join } from 'node:path';

/** Temp roots of node sandboxes are `<os.tmpdir()>/nodeagent-sbx-XXXXXX`. */
export const SANDBOX_DIR_PREFIX = 'nodeagent-sbx-';

/** Paths of one sandbox. */
export interface SandboxLayout {
  /** The temp root; everything below is removed by `stop()`. */
  readonly rootDir: string;
  /** containerd `root` (persistent state). */
  readonly containerdRoot: string;
  /** containerd `state` (runtime state, task bundles). */
  readonly stateDir: string;
  /** containerd `temp`. */
  readonly tmpDir: string;
  /** CNI `conf_dir` holding the bridge conflist. */
  readonly cniConfDir: string;
  /** host-local IPAM allocations. */
  readonly ipamDir: string;
  /** runc `--root` for this sandbox's containers. */
  readonly runcRoot: string;
  /** Replacement for /opt/containerd. */
  readonly optDir: string;
  /** Suggested root for pod `log_directory`. */
  readonly podLogRoot: string;
  /** containerd config file (also identifies the containerd process by its argv). */
  readonly configPath: string;
  /** containerd gRPC socket (shims carry it as `-address`). */
  readonly socketPath: string;
  /** containerd's stdout/stderr log. */
  readonly logPath: string;
  /** The busybox OCI archive imported at start. */
  readonly imagePath: string;
  /** `{ ownerPid, netnsName }` of the test process that started the sandbox. */
  readonly ownerFile: string;
  /** CNI network name (unique per sandbox; prefixes libcni's cache files in /var/lib/cni/results). */
  readonly networkName: string;
}

/** Compute the layout of the sandbox rooted at `rootDir`. */
export function sandboxLayout(rootDir: string): SandboxLayout {
  return {
    rootDir,
    containerdRoot: join(rootDir, 'root'),
    stateDir: join(rootDir, 'state'),
    tmpDir: join(rootDir, 'tmp'),
    cniConfDir: join(rootDir, 'cni-conf'),
    ipamDir: join(rootDir, 'cni-ipam'),
    runcRoot: join(rootDir, 'runc'),
    optDir: join(rootDir, 'opt'),
    podLogRoot: join(rootDir, 'pod-logs'),
    configPath: join(rootDir, 'config.toml'),
    socketPath: join(rootDir, 'containerd.sock'),
    logPath: join(rootDir, 'containerd.log'),
    imagePath: join(rootDir, 'busybox-image.tar'),
    ownerFile: join(rootDir, 'owner.json'),
    networkName: `nodeagent-${rootDir.slice(rootDir.lastIndexOf('-') + 1)}`,
  };
}

/** Contents of {@link SandboxLayout.ownerFile}. */
export interface SandboxOwner {
  /** PID of the test process that started the sandbox. */
  readonly ownerPid: number;
  /** Name of the sandbox's node network namespace. */
  readonly netnsName: string;
}
