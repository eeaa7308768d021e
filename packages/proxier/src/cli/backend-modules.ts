/**
 * The offline commands' (`render`, `trace`, `apply`, `doctor`) access to the backend packages:
 * each loads only the package of the backend it was given (`-b`), on use, so an nftables user
 * needs only `@nodeagent/nftables` installed.
 *
 * @module
 */
import {
  BACKEND_PACKAGES,
  type BackendModules,
  BackendNotInstalledError,
  loadBackendModule,
  type ModuleLoader,
  type ProxyMode,
} from '../backend-loader.js';
import { CliFailure } from './errors.js';

/**
 * Imports backend package `pkg` for the offline commands' backend `mode` (`-b ipvs` needs
 * `@nodeagent/iptables` too).
 * @throws CliFailure "--backend nftables needs @nodeagent/nftables: npm install @nodeagent/nftables" when it is not installed
 */
export async function offlineBackendModule<M extends ProxyMode>(
  pkg: M,
  mode: ProxyMode,
  load?: ModuleLoader,
): Promise<BackendModules[M]> {
  try {
    return await loadBackendModule(pkg, { ...(load ? { load } : {}), forMode: mode });
  } catch (e) {
    if (!(e instanceof BackendNotInstalledError)) throw e;
    const name = BACKEND_PACKAGES[pkg];
    throw new CliFailure(`--backend ${mode} needs ${name}: npm install ${name}`);
  }
}
