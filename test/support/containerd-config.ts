/**
 * Config files for a private containerd: edits of `containerd config default` output and the
 * CNI bridge conflist.
 * @module
 */

/** Thrown when the default config does not have the shape these edits expect. */
export class ContainerdConfigError extends Error {
  override readonly name = 'ContainerdConfigError';
}

/** TOML string literal (basic string with escapes). */
export function tomlString(value: string): string {
  return JSON.stringify(value);
}

/**
 * Replace the value of `key` inside `[section]` (use `''` for top-level keys) of a TOML text laid out
 * like `containerd config default` output (one `key = value` per line). `value` is a TOML literal.
 * @throws ContainerdConfigError when the section or key is not there, so config drift is loud.
 */
export function setTomlValue(toml: string, section: string, key: string, value: string): string {
  const lines = toml.split('\n');
  let current = '';
  let found = false;
  const keyRe = new RegExp(`^(\\s*)${key.replace(/[.*+?^${}()|[\]\\"]/g, '\\$&')}\\s*=`);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const header = /^\s*\[([^\]].*)\]\s*$/.exec(line);
    if (header) {
      current = (header[1] as string).trim();
      continue;
    }
    const m = current === section ? keyRe.exec(line) : null;
    if (m) {
      lines[i] = `${m[1]}${key} = ${value}`;
      found = true;
      break;
    }
  }
  if (!found)
    throw new ContainerdConfigError(`key ${key} not found in section [${section}] of the containerd config`);
  return lines.join('\n');
}

/** Paths and settings of one private containerd. */
export interface ContainerdConfigInput {
  /** Persistent state (`root`). */
  readonly rootDir: string;
  /** Runtime state (`state`). */
  readonly stateDir: string;
  /** Temp dir for containerd (`temp`). */
  readonly tempDir: string;
  /** gRPC socket path (CRI and containerd API). */
  readonly socketPath: string;
  /** Directory holding the CNI conflist. */
  readonly cniConfDir: string;
  /** Directory of CNI plugin binaries. */
  readonly cniBinDir: string;
  /** Sandbox (pause) image reference. */
  readonly sandboxImage: string;
  /** `overlayfs` or `native`. */
  readonly snapshotter: string;
  /** runc state root (`--root`) for the runc shim, so runc state stays under our temp dir. */
  readonly runcRoot: string;
  /** Replacement of `/opt/containerd`. */
  readonly optDir: string;
  /** containerd log level (`debug`, `info`, `warn`, ...). */
  readonly logLevel: string;
}

/** Plugins a test node does not need; disabling them avoids probing the host's storage. */
const DISABLED_PLUGINS = [
  'io.containerd.snapshotter.v1.aufs',
  'io.containerd.snapshotter.v1.btrfs',
  'io.containerd.snapshotter.v1.devmapper',
  'io.containerd.snapshotter.v1.zfs',
  // (io.containerd.runtime.v1.linux must stay: containerd 1.6's tasks service requires it.)
];

/** Turn `containerd config default` output into the config of a private, isolated instance. */
export function renderContainerdConfig(defaultToml: string, c: ContainerdConfigInput): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  const edits: [string, string, string][] = [
    ['', 'disabled_plugins', `[${DISABLED_PLUGINS.map(tomlString).join(', ')}]`],
    ['', 'root', tomlString(c.rootDir)],
    ['', 'state', tomlString(c.stateDir)],
    ['', 'temp', tomlString(c.tempDir)],
    ['grpc', 'address', tomlString(c.socketPath)],
    ['grpc', 'tcp_address', '""'],
    ['ttrpc', 'address', tomlString(`${c.socketPath}.ttrpc`)],
    // The debug and metrics listeners stay off: nothing else may bind sockets or ports.
    ['debug', 'address', '""'],
    ['debug', 'level', tomlString(c.logLevel)],
    ['metrics', 'address', '""'],
    [cri, 'sandbox_image', tomlString(c.sandboxImage)],
    // Required on these machines: without it runc cannot write oom_score_adj and every
    // RunPodSandbox fails (see REAL-NODE.md).
    [cri, 'restrict_oom_score_adj', 'true'],
    // Pod netns bind mounts go under our state dir instead of the host's /run/netns.
    [cri, 'netns_mounts_under_state_dir', 'true'],
    [cri, 'disable_tcp_service', 'true'],
    [cri, 'stream_server_address', tomlString('127.0.0.1')],
    [cri, 'stream_server_port', tomlString('0')],
    [`${cri}.cni`, 'bin_dir', tomlString(c.cniBinDir)],
    [`${cri}.cni`, 'conf_dir', tomlString(c.cniConfDir)],
    [`${cri}.cni`, 'max_conf_num', '1'],
    [`${cri}.containerd`, 'snapshotter', tomlString(c.snapshotter)],
    [`${cri}.containerd.runtimes.runc.options`, 'Root', tomlString(c.runcRoot)],
    ['plugins."io.containerd.internal.v1.opt"', 'path', tomlString(c.optDir)],
  ];
  return edits.reduce((toml, [section, key, value]) => setTomlValue(toml, section, key, value), defaultToml);
}

/** Settings of the pod network. */
export interface BridgeConflistInput {
  /** CNI network name; unique per sandbox so leftovers in /var/lib/cni are attributable. */
  readonly networkName: string;
  /** Linux bridge name inside the node namespace. */
  readonly bridgeName: string;
  /** Pod subnet for host-local IPAM, e.g. `10.88.7.0/24`. */
  readonly podCidr: string;
  /** host-local allocation directory (instead of the host-wide /var/lib/cni/networks). */
  readonly ipamDataDir: string;
}

/**
 * A `bridge` conflist (gateway on the bridge, no masquerade, host-local IPAM). containerd's CRI
 * adds its own loopback network to every pod, so `lo` is not part of this chain.
 */
export function bridgeConflist(c: BridgeConflistInput): string {
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: c.networkName,
      plugins: [
        {
          type: 'bridge',
          bridge: c.bridgeName,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: c.podCidr }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: c.ipamDataDir,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}
