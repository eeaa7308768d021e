/**
 * `apply`: programs the rules into a named network namespace through the backend libraries'
 * real executors and sync steps (the same code the proxier's loop runs), and turns tool
 * failures into explanations.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { CommandError } from '@nodeagent/core';
// Types only: the backend's package is loaded on use (an nftables apply needs only nftables).
import type { IpvsUnavailableError } from '@nodeagent/ipvs';
import type { BackendModules, ModuleLoader } from '../backend-loader.js';
import type { BackendArgs } from './args.js';
import { offlineBackendModule } from './backend-modules.js';
import { CliFailure, oneLine } from './errors.js';
import type { IpvsArgs } from './kube-proxy-flags.js';
import type { LoadedInput } from './load-input.js';
import type { BackendRules } from './render-backend.js';

const MAX_TOOL_LINES = 20;

/** A failed tool run: iptables', nftables' and ipvs' command errors all extend core's `CommandError`. */
type ToolError = CommandError;

function isToolError(e: unknown): e is ToolError {
  return e instanceof CommandError;
}

/** The tool's stderr as indented, sanitised lines (at most {@link MAX_TOOL_LINES}). */
function stderrLines(e: ToolError): string[] {
  const lines = e.stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '');
  const shown = lines.slice(0, MAX_TOOL_LINES).map(oneLine);
  if (lines.length > MAX_TOOL_LINES) shown.push(`... (${lines.length - MAX_TOOL_LINES} more lines)`);
  return shown;
}

/** The program that failed, without the `nsenter` / `ip netns exec` prefix. */
function toolName(argv: readonly string[]): string {
  const i = argv.indexOf('--');
  if (argv[0] === 'nsenter' && i >= 0) return argv[i + 1] ?? 'nsenter';
  if (argv[0] === 'ip' && argv[1] === 'netns' && argv[2] === 'exec') return argv[4] ?? 'ip';
  return argv[0] ?? '?';
}

function toolFailure(what: string, e: ToolError): CliFailure {
  const tool = toolName(e.argv);
  if (e.exitCode === undefined && /ENOENT/.test(e.message)) {
    return new CliFailure(`${what}: ${tool} is not installed (not found on PATH)`);
  }
  return new CliFailure(
    `${what}: ${oneLine(e.argv.join(' '))} exited with ${e.exitCode ?? 'a signal'}`,
    stderrLines(e),
  );
}

async function applyIptables(
  rules: Extract<BackendRules, { backend: 'iptables' }>,
  input: LoadedInput,
  netns: string,
  ipt: BackendModules['iptables'],
): Promise<string> {
  const { IptablesSyncer, snapshotRenderOptions: iptablesSnapshotOptions, SpawnIptablesExecutor } = ipt;
  const executor = new SpawnIptablesExecutor({ netns, family: input.family === 6 ? 'IPv6' : 'IPv4' });
  const syncer = new IptablesSyncer({
    executor,
    render: iptablesSnapshotOptions(input.snapshot, rules.options),
  });
  // Chains of an earlier apply whose services are gone: the full sync flushes and deletes them.
  const nat = await executor.save('nat');
  syncer.planner.seedExistingChains(
    nat.split('\n').flatMap((l) => (l.startsWith(':') ? [l.slice(1).split(' ')[0]!] : [])),
  );
  const r = await syncer.syncSnapshot(input.snapshot);
  return (
    `iptables: applied ${rules.programmedPorts} service port(s) to netns ${netns}: jump rules ensured, ` +
    `${r.restoreCalls} iptables-restore call(s), ${r.bytes} bytes, ${r.deletedChains} stale chain(s) deleted`
  );
}

async function applyNftables(
  rules: Extract<BackendRules, { backend: 'nftables' }>,
  input: LoadedInput,
  netns: string,
  nft: BackendModules['nftables'],
): Promise<string> {
  const { NftSyncer, snapshotRenderOptions: nftSnapshotOptions, SpawnNftExecutor } = nft;
  const syncer = new NftSyncer({
    executor: new SpawnNftExecutor({ netns }),
    render: nftSnapshotOptions(input.snapshot, rules.options),
    // One transaction: chains of an earlier apply are flushed and deleted in it.
    staleChainDelayMs: 0,
  });
  const r = await syncer.sync(input.snapshot, { full: true });
  return (
    `nftables: applied ${rules.programmedPorts} service port(s) to netns ${netns} as one nft -f ` +
    `transaction: table ${rules.ruleset.family} ${rules.ruleset.table}, ${r.lines} commands, ${r.bytes} bytes, ` +
    `${r.deletedChains.length} stale chain(s) deleted`
  );
}

const NO_IPVS = /Protocol not available|Can't initialize ipvs|IP Virtual Server/i;

/** The failure of kube-proxy's IPVS start-up, explained; nothing has been changed yet then. */
function startupFailure(
  e: IpvsUnavailableError,
  netns: string,
  ipvs: BackendModules['ipvs'],
): CliFailure | ToolError {
  const cause = e.cause;
  if (isToolError(cause) && cause.exitCode === undefined) return cause;
  if (e.reason === 'kernel' && cause instanceof ipvs.IpvsCommandError && NO_IPVS.test(cause.stderr)) {
    return new CliFailure(
      `ipvs: this kernel has no IPVS support (CONFIG_IP_VS is not set or the ip_vs module is not loaded); ` +
        `nothing was changed in netns ${netns}`,
      [
        ...stderrLines(cause).map((l) => `ipvsadm: ${l}`),
        'use --backend iptables or --backend nftables here, or `render --backend ipvs` to see the rules',
      ],
    );
  }
  return new CliFailure(`ipvs: ${oneLine(e.message)}; nothing was changed in netns ${netns}`);
}

async function applyIpvs(
  rules: Extract<BackendRules, { backend: 'ipvs' }>,
  input: LoadedInput,
  netns: string,
  args: IpvsArgs,
  ipvs: BackendModules['ipvs'],
  ipt: BackendModules['iptables'],
): Promise<string> {
  const {
    IpvsCommandError,
    IpvsReconciler,
    IpvsUnavailableError,
    ipvsJumpRules,
    ProcSysctl,
    prepareIpvsNode,
    renderResidualIptables,
    SpawnIpvsExecutor,
    SysctlError,
  } = ipvs;
  const executor = new SpawnIpvsExecutor({ netns });
  try {
    // kube-proxy's start-up in the namespace: checks first (nothing changed if they fail),
    // then the sysctls (per namespace) and the timeouts.
    await prepareIpvsNode({
      executor,
      sysctl: new ProcSysctl({ netns }),
      scheduler: args.scheduler,
      strictARP: args.strictARP,
      timeouts: { tcpMs: args.tcpTimeoutMs, tcpFinMs: args.tcpFinTimeoutMs, udpMs: args.udpTimeoutMs },
    });
  } catch (e) {
    if (e instanceof IpvsUnavailableError) throw startupFailure(e, netns, ipvs);
    if (e instanceof SysctlError) throw new CliFailure(`ipvs: ${oneLine(e.message)}`);
    throw e;
  }
  const reconciler = new IpvsReconciler({
    executor,
    ipFamily: input.family,
    excludeCIDRs: args.excludeCIDRs,
  });
  let operations: number;
  try {
    operations = (await reconciler.sync(rules.plan)).operations.length;
  } catch (e) {
    if (e instanceof IpvsCommandError && /Unknown device type/i.test(e.stderr)) {
      throw new CliFailure(
        'ipvs: this kernel cannot create the dummy interface kube-ipvs0 (no dummy link type); ' +
          'IPVS virtual servers may have been partly programmed',
        stderrLines(e),
      );
    }
    throw e;
  } finally {
    reconciler.close();
  }
  const residual = new ipt.SpawnIptablesExecutor({ netns, family: input.family === 6 ? 'IPv6' : 'IPv4' });
  await residual.ensureJumps(ipvsJumpRules());
  await residual.restore(renderResidualIptables(rules.plan.iptables));
  return (
    `ipvs: applied ${rules.programmedPorts} service port(s) to netns ${netns}: ${operations} IPVS/ipset/address ` +
    `operation(s), residual iptables rules restored`
  );
}

/**
 * Applies `rules` to the network namespace `netns` and returns a one-line summary, loading only
 * the backend's package (`ipvs` with `@nodeagent/iptables` for its residual rules).
 * @throws CliFailure with an explanation when the namespace is missing, the backend's package is not installed, or a tool fails.
 */
export async function applyRules(
  rules: BackendRules,
  input: LoadedInput,
  netns: string,
  backend: BackendArgs,
  load?: ModuleLoader,
): Promise<string> {
  if (!existsSync(`/run/netns/${netns}`)) {
    throw new CliFailure(
      `network namespace ${JSON.stringify(netns)} does not exist (no /run/netns/${netns}; create it with ip netns add)`,
    );
  }
  try {
    switch (rules.backend) {
      case 'iptables':
        return await applyIptables(
          rules,
          input,
          netns,
          await offlineBackendModule('iptables', 'iptables', load),
        );
      case 'nftables':
        return await applyNftables(
          rules,
          input,
          netns,
          await offlineBackendModule('nftables', 'nftables', load),
        );
      case 'ipvs':
        return await applyIpvs(
          rules,
          input,
          netns,
          backend.ipvs,
          await offlineBackendModule('ipvs', 'ipvs', load),
          await offlineBackendModule('iptables', 'ipvs', load),
        );
    }
  } catch (e) {
    if (isToolError(e)) throw toolFailure(`${rules.backend}: applying to netns ${netns} failed`, e);
    throw e;
  }
}
