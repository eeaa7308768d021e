/**
 * Backends are optional installs: `@nodeagent/iptables`, `@nodeagent/nftables` and
 * `@nodeagent/ipvs` are optional peer dependencies, imported only for the chosen mode, and a
 * missing one is a BackendNotInstalledError naming the package to install. Missing installs are
 * simulated with injected module loaders (the workspace has all three as devDependencies);
 * the static import graph of the entry points is checked from the sources.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noopLogger } from '@nodeagent/core';
import { RecordingLogger } from '@nodeagent/core/testing';
import { NftablesBackend } from '@nodeagent/nftables';
import { describe, expect, it } from 'vitest';
import { buildBackend, cleanupAllModes } from '../src/cli/run.js';
import { parseRunCommandLine, type RunCommand } from '../src/cli/run-config.js';
import { runProxyCli } from '../src/cli/run-proxy-cli.js';
import {
  BACKEND_PACKAGES,
  BackendNotInstalledError,
  loadBackendModule,
  type ModuleLoader,
} from '../src/index.js';
import { BASE_ARGS, runCli } from './cli-fixtures.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** A loader for which the given packages are not installed; node's error for a missing package. */
function without(...missing: string[]): ModuleLoader {
  return async (specifier) => {
    if (missing.includes(specifier)) {
      throw Object.assign(
        new Error(
          `Cannot find package '${specifier}' imported from /app/node_modules/@nodeagent/proxier/dist/index.js`,
        ),
        { code: 'ERR_MODULE_NOT_FOUND' },
      );
    }
    return import(specifier);
  };
}

describe('loadBackendModule', () => {
  it('imports the package of the mode', async () => {
    const nft = await loadBackendModule('nftables');
    expect(nft.NftablesBackend).toBe(NftablesBackend);
    expect(BACKEND_PACKAGES).toEqual({
      iptables: '@nodeagent/iptables',
      nftables: '@nodeagent/nftables',
      ipvs: '@nodeagent/ipvs',
    });
  });

  it('a missing package is a typed error naming the package to install', async () => {
    const err = await loadBackendModule('nftables', { load: without('@nodeagent/nftables') }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BackendNotInstalledError);
    expect(err).toMatchObject({
      name: 'BackendNotInstalledError',
      mode: 'nftables',
      packageName: '@nodeagent/nftables',
      message: '--proxy-mode nftables needs @nodeagent/nftables: npm install @nodeagent/nftables',
    });
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  it('recognises the real resolver’s error for a package that does not exist', async () => {
    // A real import of an absent package (vitest's resolver here, node's in production).
    const load: ModuleLoader = (s) => import(/* @vite-ignore */ `${s}-absent-for-this-test`);
    await expect(loadBackendModule('ipvs', { load })).rejects.toBeInstanceOf(BackendNotInstalledError);
  });

  it('names the mode it was loaded for (IPVS mode needs iptables too)', async () => {
    await expect(
      loadBackendModule('iptables', { load: without('@nodeagent/iptables'), forMode: 'ipvs' }),
    ).rejects.toThrow('--proxy-mode ipvs needs @nodeagent/iptables: npm install @nodeagent/iptables');
  });

  it('other import failures pass through unchanged', async () => {
    const broken = new SyntaxError('Unexpected token in @nodeagent/nftables/dist/index.js');
    await expect(loadBackendModule('nftables', { load: () => Promise.reject(broken) })).rejects.toBe(broken);
    // A dependency of the package missing (not the package itself) is not reported as the package.
    const transitive = Object.assign(new Error("Cannot find package 'left-pad' imported from x"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    await expect(loadBackendModule('nftables', { load: () => Promise.reject(transitive) })).rejects.toBe(
      transitive,
    ); // The package is installed but its entry file is missing (a workspace not built yet): node's
    // error names the file, which is what the user needs, not "npm install".
    const unbuilt = Object.assign(
      new Error(
        "Cannot find module '/app/node_modules/@nodeagent/iptables/dist/index.js' imported from /app/node_modules/@nodeagent/proxier/dist/index.js",
      ),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    await expect(loadBackendModule('iptables', { load: () => Promise.reject(unbuilt) })).rejects.toBe(
      unbuilt,
    );
  });
});

describe('nodeagent-proxy run with a backend package missing', () => {
  const parse = async (argv: string[], load?: ModuleLoader) =>
    (await parseRunCommandLine(argv, async () => '', load)) as RunCommand;

  it('builds only the chosen mode’s backend; a missing one is a CliFailure naming the package', async () => {
    const cmd = await parse(['--proxy-mode', 'nftables']);
    // iptables and IPVS are "not installed": the nftables mode does not need them.
    const load = without('@nodeagent/iptables', '@nodeagent/ipvs');
    const backend = await buildBackend(cmd.config, 4, ['192.168.0.2'], noopLogger, load);
    expect(backend).toBeInstanceOf(NftablesBackend);
    await expect(
      buildBackend(cmd.config, 4, ['192.168.0.2'], noopLogger, without('@nodeagent/nftables')),
    ).rejects.toMatchObject({
      name: 'CliFailure',
      message: '--proxy-mode nftables needs @nodeagent/nftables: npm install @nodeagent/nftables',
    });
  });

  it('--proxy-mode ipvs checks its scheduler with @nodeagent/ipvs, and fails clearly without it', async () => {
    await expect(parse(['--proxy-mode', 'ipvs'], without('@nodeagent/ipvs'))).rejects.toThrow(
      '--proxy-mode ipvs needs @nodeagent/ipvs: npm install @nodeagent/ipvs',
    );
    // Other modes never load it.
    const cmd = await parse(
      ['--proxy-mode', 'iptables', '--ipvs-scheduler', 'nope'],
      without('@nodeagent/ipvs'),
    );
    expect(cmd.config.mode).toBe('iptables');
    await expect(parse(['--proxy-mode', 'ipvs', '--ipvs-scheduler', 'nope'])).rejects.toThrow(/Scheduler/);
  });

  it('--cleanup skips the modes whose package is not installed', async () => {
    const logger = new RecordingLogger();
    const all = without(...Object.values(BACKEND_PACKAGES));
    expect(await cleanupAllModes(logger, all)).toEqual([]);
    expect(
      logger.records
        .filter((r) => r.msg?.startsWith('not installed'))
        .map((r) => [r.fields.mode, r.fields.package]),
    ).toEqual([
      ['iptables', '@nodeagent/iptables'],
      ['nftables', '@nodeagent/nftables'],
      ['ipvs', '@nodeagent/ipvs'],
    ]);
  });
});

/** Runtime (non-type) module specifiers a source file imports statically. */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(?!type\s)[^;]*?\sfrom\s+'([^']+)';/gms)) out.push(m[2]!);
  for (const m of text.matchAll(/^import\s+'([^']+)';/gm)) out.push(m[1]!);
  return out;
}

/** Every backend package reachable from `entry` through static runtime imports of our sources. */
function reachableBackendImports(entry: string): Map<string, string> {
  const found = new Map<string, string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (Object.values(BACKEND_PACKAGES).some((p) => spec === p || spec.startsWith(`${p}/`)))
        found.set(spec, file);
    }
  };
  visit(entry);
  return found;
}

describe('the entry points load without any backend package', () => {
  it('@nodeagent/proxier (src/index.ts) imports no backend package statically', () => {
    expect([...reachableBackendImports(resolve(SRC, 'index.ts'))]).toEqual([]);
  });

  it('the nodeagent-proxy bin (src/cli.ts) imports none statically either (run loads its mode’s)', () => {
    expect([...reachableBackendImports(resolve(SRC, 'cli.ts'))]).toEqual([]);
    // The check itself sees static imports: the doctor's checks parse iptables and nft output.
    expect([...reachableBackendImports(resolve(SRC, 'cli/doctor-checks.ts')).keys()].sort()).toEqual([
      '@nodeagent/iptables',
      '@nodeagent/nftables',
    ]);
  });

  it('render, trace and apply import no backend package statically (each loads its -b backend’s)', () => {
    for (const file of [
      'render-backend.ts',
      'trace.ts',
      'apply.ts',
      'args.ts',
      'doctor.ts',
      'run-proxy-cli.ts',
    ])
      expect([...reachableBackendImports(resolve(SRC, 'cli', file))], file).toEqual([]);
  });
});

/** `trace -b <backend>` of a packet to the fixture's web Service, with `load` as the module loader. */
const traceWeb = (backend: string, load: ModuleLoader) =>
  runCli(
    [
      'trace',
      '--backend',
      backend,
      ...BASE_ARGS,
      '--src',
      '10.0.0.99',
      '--dst',
      '172.30.0.10',
      '--port',
      '80',
    ],
    { load },
  );

describe('render, trace, apply and doctor with only their backend installed', () => {
  const others = (mode: keyof typeof BACKEND_PACKAGES) =>
    without(...Object.entries(BACKEND_PACKAGES).flatMap(([m, p]) => (m === mode ? [] : [p])));

  it('render -b nftables works with only @nodeagent/nftables', async () => {
    const r = await runCli(['render', '--backend', 'nftables', ...BASE_ARGS], { load: others('nftables') });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('add table ip kube-proxy');
  });

  it('render and trace -b iptables work with only @nodeagent/iptables (and --nfacct auto)', async () => {
    const load = others('iptables');
    const r = await runCli(['render', '--backend', 'iptables', ...BASE_ARGS], { load });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('-A KUBE-SERVICES');
    const t = await traceWeb('iptables', load);
    expect([t.code, t.stderr]).toEqual([0, '']);
    expect(t.stdout).toContain('outcome:    endpoints');
  });

  it('trace -b nftables works with only @nodeagent/nftables', async () => {
    const t = await traceWeb('nftables', others('nftables'));
    expect([t.code, t.stderr]).toEqual([0, '']);
    expect(t.stdout).toContain('outcome:    endpoints');
  });

  it('render and trace -b ipvs work with only @nodeagent/ipvs, its scheduler checked by it', async () => {
    const load = others('ipvs');
    const r = await runCli(['render', '--backend', 'ipvs', ...BASE_ARGS, '--ipvs-scheduler', 'rr'], { load });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('# --- ipvsadm-restore');
    const bad = await runCli(['render', '--backend', 'ipvs', ...BASE_ARGS, '--ipvs-scheduler', 'nope'], {
      load,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Scheduler');
  });

  it('a verb without its backend fails naming the package to install', async () => {
    const r = await runCli(['render', '--backend', 'nftables', ...BASE_ARGS], {
      load: without('@nodeagent/nftables'),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'nodeagent-proxy: error: --backend nftables needs @nodeagent/nftables: npm install @nodeagent/nftables\n',
    );
    const t = await traceWeb('ipvs', without('@nodeagent/ipvs'));
    expect(t.stderr).toContain('--backend ipvs needs @nodeagent/ipvs: npm install @nodeagent/ipvs');
  });

  it('doctor needs the iptables and nftables parsers, not ipvs', async () => {
    let stderr = '';
    const code = await runProxyCli(['doctor', '--json'], {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (stderr += t) },
      env: {},
      load: without('@nodeagent/nftables', '@nodeagent/ipvs'),
    });
    expect(code).toBe(1);
    expect(stderr).toContain('(@nodeagent/nftables not installed): npm install @nodeagent/nftables');
  });
});
