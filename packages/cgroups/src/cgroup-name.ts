/**
 * Cgroup names as the kubelet keeps them (upstream `CgroupName`): a list of components such as
 * `['kubepods', 'burstable', 'pod<uid>']`, turned into a literal path by the driver — cgroupfs
 * joins them (`/kubepods/burstable/pod<uid>`), systemd makes nested slices with `-` escaped to
 * `_` (`/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice`).
 *
 * @module
 */
import { CgroupError } from './errors.js';

/** A cgroup name: its components from the root. The root cgroup is `[]`. */
export type CgroupName = readonly string[];

/** How cgroup names become paths (the kubelet's `cgroupDriver`). */
export type CgroupDriver = 'cgroupfs' | 'systemd';

const SYSTEMD_SUFFIX = '.slice';

/**
 * `base` plus `components` (upstream `NewCgroupName`): a component may hold neither `/` nor
 * `_` (`_` is reserved for the systemd escaping of `-`). @throws CgroupError `invalid-name`
 */
export function newCgroupName(base: CgroupName, ...components: string[]): CgroupName {
  for (const c of components) {
    if (c.includes('/') || c.includes('_')) {
      throw new CgroupError(
        'invalid-name',
        c,
        `invalid character in component ${JSON.stringify(c)} of cgroup name: "/" and "_" are not allowed`,
      );
    }
  }
  return [...base, ...components];
}

/** The cgroupfs path of a name (upstream `ToCgroupfs`): `/` + components joined by `/`. */
export function toCgroupfs(name: CgroupName): string {
  return `/${name.join('/')}`;
}

/** A cgroupfs path back to a name (upstream `ParseCgroupfsToCgroupName`). */
export function parseCgroupfs(path: string): CgroupName {
  const parts = path.replace(/^\/+/, '').split('/');
  return parts.length === 1 && parts[0] === '' ? [] : parts;
}

/**
 * The slice `a-b-c.slice` expanded into its parents, `/a.slice/a-b.slice/a-b-c.slice`
 * (systemd's and runc's `ExpandSlice`); `-.slice` is the root. @throws CgroupError `invalid-name`
 */
export function expandSlice(slice: string): string {
  const bad = () =>
    new CgroupError('invalid-name', slice, `invalid systemd slice name ${JSON.stringify(slice)}`);
  if (!slice.endsWith(SYSTEMD_SUFFIX) || slice.includes('/')) throw bad();
  const base = slice.slice(0, -SYSTEMD_SUFFIX.length);
  if (base === '-') return '/';
  if (base.startsWith('-') || base.endsWith('-') || base.includes('--')) throw bad();
  let path = '';
  let prefix = '';
  for (const part of base.split('-')) {
    prefix = prefix === '' ? part : `${prefix}-${part}`;
    path += `/${prefix}${SYSTEMD_SUFFIX}`;
  }
  return path;
}

/**
 * The systemd form of a name, expanded into a cgroupfs path (upstream `ToSystemd`):
 * `['kubepods','burstable','pod12-34']` → `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice`.
 */
export function toSystemd(name: CgroupName): string {
  if (name.length === 0 || (name.length === 1 && name[0] === '')) return '/';
  return expandSlice(`${name.map((p) => p.replaceAll('-', '_')).join('-')}${SYSTEMD_SUFFIX}`);
}

/** A systemd path back to a name (upstream `ParseSystemdToCgroupName`): its last slice, unescaped. */
export function parseSystemd(path: string): CgroupName {
  const base = path.split('/').pop() ?? '';
  const name = base.endsWith(SYSTEMD_SUFFIX) ? base.slice(0, -SYSTEMD_SUFFIX.length) : base;
  return name.split('-').map((p) => p.replaceAll('_', '-'));
}

/** The literal path of `name` under `driver` (upstream `cgroupManager.Name`), always in cgroupfs form. */
export function cgroupPath(name: CgroupName, driver: CgroupDriver): string {
  return driver === 'systemd' ? toSystemd(name) : toCgroupfs(name);
}

/** A literal path back to a name under `driver` (upstream `cgroupManager.CgroupName`). */
export function parseCgroupPath(path: string, driver: CgroupDriver): CgroupName {
  return driver === 'systemd' ? parseSystemd(path) : parseCgroupfs(path);
}
