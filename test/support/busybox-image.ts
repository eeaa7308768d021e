/**
 * A busybox OCI image built in-process from the host's static `/bin/busybox`, for containerd
 * tests without a registry. The same image serves as the pod sandbox ("pause") image.
 *
 * The archive is deterministic (fixed mtimes, owners and entry order), so its digests only change
 * when the busybox binary or the options change.
 *
 * @example
 * ```ts
 * const image = await writeBusyboxImage('/tmp/x/busybox.tar');
 * await runChecked(['ctr', '-a', sock, '-n', 'k8s.io', 'images', 'import', '/tmp/x/busybox.tar']);
 * // image.ref === 'registry.local/busybox:latest'
 * ```
 * @module
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { BUSYBOX_PATH } from './node-paths.js';
import { buildTar, type TarEntry } from './tar.js';

/** Default image reference (the `io.containerd.image.name` annotation). */
export const BUSYBOX_IMAGE_REF = 'registry.local/busybox:latest';

/** Applets linked into `/bin` by default. */
export const DEFAULT_BUSYBOX_APPLETS: readonly string[] = (
  '[ ash awk basename cat chmod cp cut date dd df dirname du echo env expr false find grep ' +
  'head hostname httpd id ifconfig ip kill ln ls mkdir mount mv nc netstat nslookup ping ' +
  'printf ps pwd rm rmdir sed seq sh sleep sort stat sync tail tee test timeout touch tr true ' +
  'umount uname uptime usleep wc wget whoami xargs yes'
).split(' ');

/**
 * Default `Cmd`: a pause-like process that sleeps forever and exits 0 on SIGTERM/SIGINT
 * (PID 1 in a container ignores signals it has no handler for).
 */
export const DEFAULT_BUSYBOX_CMD: readonly string[] = [
  '/bin/sh',
  '-c',
  "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done",
];

/** Options for {@link buildBusyboxImage}. */
export interface BusyboxImageOptions {
  /** Image reference stored in `index.json`. @default BUSYBOX_IMAGE_REF */
  readonly ref?: string;
  /** The static busybox binary to package. @default '/bin/busybox' */
  readonly busyboxPath?: string;
  /** Applet names symlinked to `/bin/busybox`. @default DEFAULT_BUSYBOX_APPLETS */
  readonly applets?: readonly string[];
  /** Image `Cmd` (there is no `Entrypoint`). @default DEFAULT_BUSYBOX_CMD */
  readonly cmd?: readonly string[];
  /** Image `User` (`uid`, `uid:gid` or a name). @default none (root) */
  readonly user?: string;
  /** OCI architecture. @default derived from process.arch (x64 → 'amd64') */
  readonly architecture?: string;
}

/** A built image archive and its identifiers. */
export interface BusyboxImage {
  /** Image reference, e.g. `registry.local/busybox:latest`. */
  readonly ref: string;
  /** The OCI image layout as a tar archive, ready for `ctr images import`. */
  readonly archive: Buffer;
  /** `sha256:…` of the manifest (what containerd reports as the image's target digest). */
  readonly manifestDigest: string;
  /** `sha256:…` of the config: the image ID reported by CRI `ImageStatus`. */
  readonly configDigest: string;
  /** `sha256:…` of the uncompressed layer (also its diff ID). */
  readonly layerDigest: string;
}

const OCI = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
} as const;

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

function ociArch(): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    arm64: 'arm64',
    arm: 'arm',
    ppc64: 'ppc64le',
    s390x: 's390x',
  };
  return map[process.arch] ?? process.arch;
}

function layerEntries(busybox: Buffer, applets: readonly string[]): TarEntry[] {
  const dirs = [
    'bin',
    'dev',
    'etc',
    'home',
    'proc',
    'sbin',
    'sys',
    'usr',
    'usr/bin',
    'usr/sbin',
    'var',
    'var/run',
  ];
  const entries: TarEntry[] = dirs.map((path) => ({ type: 'dir', path }));
  entries.push({ type: 'dir', path: 'root', mode: 0o700 }, { type: 'dir', path: 'tmp', mode: 0o1777 });
  entries.push(
    {
      type: 'file',
      path: 'etc/passwd',
      data: Buffer.from('root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n'),
    },
    { type: 'file', path: 'etc/group', data: Buffer.from('root:x:0:\nnogroup:x:65534:\n') },
    { type: 'file', path: 'bin/busybox', data: busybox, mode: 0o755 },
  );
  for (const applet of [...new Set(applets)].sort()) {
    if (applet === 'busybox' || applet.includes('/')) continue;
    entries.push({ type: 'symlink', path: `bin/${applet}`, target: 'busybox' });
  }
  return entries;
}

/** Build the image archive in memory (about 2 MB; takes milliseconds). */
export async function buildBusyboxImage(opts: BusyboxImageOptions = {}): Promise<BusyboxImage> {
  const ref = opts.ref ?? BUSYBOX_IMAGE_REF;
  const busybox = await readFile(opts.busyboxPath ?? BUSYBOX_PATH);
  const layer = buildTar(layerEntries(busybox, opts.applets ?? DEFAULT_BUSYBOX_APPLETS));
  const layerDigest = sha256(layer);
  const config = Buffer.from(
    JSON.stringify({
      created: '1970-01-01T00:00:00Z',
      architecture: opts.architecture ?? ociArch(),
      os: 'linux',
      config: {
        Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        Cmd: [...(opts.cmd ?? DEFAULT_BUSYBOX_CMD)],
        WorkingDir: '/',
        ...(opts.user === undefined ? {} : { User: opts.user }),
      },
      rootfs: { type: 'layers', diff_ids: [layerDigest] },
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'nodeagent test/support/busybox-image.ts' }],
    }),
  );
  const configDigest = sha256(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI.manifest,
      config: { mediaType: OCI.config, digest: configDigest, size: config.length },
      layers: [{ mediaType: OCI.layer, digest: layerDigest, size: layer.length }],
    }),
  );
  const manifestDigest = sha256(manifest);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI.index,
      manifests: [
        {
          mediaType: OCI.manifest,
          digest: manifestDigest,
          size: manifest.length,
          platform: { architecture: opts.architecture ?? ociArch(), os: 'linux' },
          annotations: { 'io.containerd.image.name': ref },
        },
      ],
    }),
  );
  const blob = (digest: string, data: Buffer): TarEntry => ({
    type: 'file',
    path: `blobs/sha256/${digest.slice('sha256:'.length)}`,
    data,
  });
  const archive = buildTar([
    { type: 'file', path: 'oci-layout', data: Buffer.from('{"imageLayoutVersion":"1.0.0"}') },
    { type: 'file', path: 'index.json', data: index },
    { type: 'dir', path: 'blobs' },
    { type: 'dir', path: 'blobs/sha256' },
    blob(layerDigest, layer),
    blob(configDigest, config),
    blob(manifestDigest, manifest),
  ]);
  return { ref, archive, manifestDigest, configDigest, layerDigest };
}

/** Build the image and write the archive to `path`. */
export async function writeBusyboxImage(path: string, opts: BusyboxImageOptions = {}): Promise<BusyboxImage> {
  const image = await buildBusyboxImage(opts);
  await writeFile(path, image.archive);
  return image;
}
