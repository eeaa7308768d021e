/**
 * Backends are optional installs: `@nodeagent/iptables`, `@nodeagent/nftables` and
 * `@nodeagent/ipvs` are optional peer dependencies of the proxier, and the package of a proxy
 * mode is imported only when that mode is chosen. A missing one gives a
 * {@link BackendNotInstalledError} naming the package to install.
 *
 * @module
 */

/** kube-proxy's `--proxy-mode` values a backend package implements. */
export type ProxyMode = 'iptables' | 'nftables' | 'ipvs';

/** The package that implements each proxy mode. */
export const BACKEND_PACKAGES: Readonly<Record<ProxyMode, string>> = {
  iptables: '@nodeagent/iptables',
  nftables: '@nodeagent/nftables',
  ipvs: '@nodeagent/ipvs',
};

/** The module each proxy mode loads. */
export interface BackendModules {
  /** `@nodeagent/iptables` (`IptablesBackend`, `SpawnIptablesExecutor`, …). */
  readonly iptables: typeof import('@nodeagent/iptables');
  /** `@nodeagent/nftables` (`NftablesBackend`, `SpawnNftExecutor`, …). */
  readonly nftables: typeof import('@nodeagent/nftables');
  /** `@nodeagent/ipvs` (`IpvsBackend`, `SpawnIpvsExecutor`, …); IPVS mode also writes iptables rules, so it needs `@nodeagent/iptables` too. */
  readonly ipvs: typeof import('@nodeagent/ipvs');
}

/** Imports a module by specifier; `(s) => import(s)` unless a test injects another. */
export type ModuleLoader = (specifier: string) => Promise<unknown>;

/** The package a proxy mode needs is not installed. */
export class BackendNotInstalledError extends Error {
  override readonly name = 'BackendNotInstalledError';
  /**
   * @param mode - The proxy mode chosen.
   * @param packageName - The package it needs.
   * @param cause - The module loader's error.
   */
  constructor(
    readonly mode: ProxyMode,
    readonly packageName: string,
    cause?: unknown,
  ) {
    super(`--proxy-mode ${mode} needs ${packageName}: npm install ${packageName}`, { cause });
  }
}

/** Options of {@link loadBackendModule}. */
export interface LoadBackendOptions {
  /** @default (specifier) => import(specifier) */
  readonly load?: ModuleLoader;
  /**
   * The proxy mode the package is loaded for, named in the error (IPVS mode loads
   * `@nodeagent/iptables` too: "--proxy-mode ipvs needs @nodeagent/iptables").
   * @default the package's own mode
   */
  readonly forMode?: ProxyMode;
}

const defaultLoader: ModuleLoader = (specifier) => import(specifier);

/**
 * True when `err` says the package `name` itself (not something it imports) could not be found.
 * A file inside the package not found (`…/node_modules/<name>/dist/index.js`: installed, but
 * not built or damaged) is not a missing package.
 */
function isMissingPackage(err: unknown, name: string): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  const notFound =
    code === 'ERR_MODULE_NOT_FOUND' ||
    code === 'MODULE_NOT_FOUND' ||
    /Cannot find (package|module)|Failed to (load|resolve)/.test(err.message);
  return notFound && err.message.includes(name) && !err.message.includes(`${name}/`);
}

/** The backend package `err` says is missing (an import of it or of a module importing it failed), if any. */
export function missingBackendPackage(err: unknown): string | undefined {
  return Object.values(BACKEND_PACKAGES).find((name) => isMissingPackage(err, name));
}

/**
 * Imports the backend package of proxy mode `pkg` (on demand: a proxier that runs nftables
 * never loads iptables or IPVS code).
 *
 * @example
 * ```ts
 * const { NftablesBackend, SpawnNftExecutor } = await loadBackendModule('nftables');
 * const backend = new NftablesBackend({ ipv4: { executor: new SpawnNftExecutor() } });
 * ```
 * @throws BackendNotInstalledError when the package is not installed; other import errors as they are
 */
export async function loadBackendModule<M extends ProxyMode>(
  pkg: M,
  options: LoadBackendOptions = {},
): Promise<BackendModules[M]> {
  const packageName = BACKEND_PACKAGES[pkg];
  if (packageName === undefined) throw new TypeError(`unknown proxy mode ${JSON.stringify(pkg)}`);
  try {
    return (await (options.load ?? defaultLoader)(packageName)) as BackendModules[M];
  } catch (err) {
    if (isMissingPackage(err, packageName))
      throw new BackendNotInstalledError(options.forMode ?? pkg, packageName, err);
    throw err;
  }
}
