// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw manifest JSON
// The deployment files in deploy/ (daemonset.yaml, kubelet-config.yaml, nodeagent.service,
// Containerfile) against what they configure: the real kubectl applies the DaemonSet file with
// `--dry-run=server` (and for real) to the mini-apiserver, which validates each object as
// kube-apiserver does; the ConfigMap's KubeletConfiguration and the container's args go through
// the agent's own --config loader and flag parser; the host paths are the agent's defaults; the
// RBAC allows, as decided by the mini-apiserver's RBAC authorizer, every request rbac.yaml and
// the proxier's rbac.yaml allow, and nothing beyond them and system:node-proxier; systemd checks
// the unit; the Containerfile's sources, entrypoint and Debian packages exist.
//
// kubectl, systemd-analyze (scripts/install-node-deps.sh installs both) and apt-cache are required
// under CI=true; elsewhere their tests skip loudly when the tool is missing.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CRI_ENDPOINT } from '@nodeagent/cri';
import { DEFAULT_POD_LOGS_ROOT } from '@nodeagent/kuberuntime';
import {
  type KubeObject,
  type MiniApiServer,
  type PolicyRule,
  RbacAuthorizer,
  type RequestInfo,
  startMiniApiServer,
  type UserInfo,
} from '@nodeagent/mini-apiserver';
import { DEFAULT_ROOT_DIR } from '@nodeagent/volumes';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseFlags } from '../src/flags.js';
import { parseKubeletConfig } from '../src/kubelet-config.js';

const DEPLOY = fileURLToPath(new URL('../deploy/', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const CI = process.env.CI === 'true';
const read = (name: string) => readFileSync(join(DEPLOY, name), 'utf8');
const docs = (text: string): any[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((d) => d !== null);

const MANIFESTS = docs(read('daemonset.yaml'));
const of = (kind: string) => MANIFESTS.filter((m) => m.kind === kind);
const DS = of('DaemonSet')[0];
const POD = DS.spec.template.spec;
const AGENT = POD.containers[0];
const CONFIG_TEXT = read('kubelet-config.yaml');

function toolMissing(cmd: string, args: string[]): boolean {
  const missing = spawnSync(cmd, args, { encoding: 'utf8' }).error !== undefined;
  if (missing && !CI) console.warn(`\n*** ${cmd} not found: skipping its deploy-manifest tests ***\n`);
  return missing;
}
const kubectlMissing = toolMissing('kubectl', ['version', '--client']);
const systemdAnalyzeMissing = toolMissing('systemd-analyze', ['--version']);
const aptCacheMissing = toolMissing('apt-cache', ['--version']);

/** `$(VAR)` references expanded as the kubelet expands a container's args (unknown ones kept). */
function expand(arg: string, env: Record<string, string>): string {
  return arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, name: string) => env[name] ?? all);
}

/** The files a container sees through its configMap volume mounts (mount path + key → data). */
function configMapFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const mount of AGENT.volumeMounts) {
    const volume = POD.volumes.find((v: any) => v.name === mount.name);
    if (!volume?.configMap) continue;
    const cm = of('ConfigMap').find(
      (c) => c.metadata.name === volume.configMap.name && c.metadata.namespace === DS.metadata.namespace,
    );
    for (const [key, data] of Object.entries(cm?.data ?? {}))
      files.set(`${mount.mountPath}/${key}`, data as string);
  }
  return files;
}

/** The container's args with the env of a pod on node `node-a` (spec.nodeName) at 10.0.0.7 (status.hostIP). */
function containerArgs(): string[] {
  const fieldValues: Record<string, string> = { 'spec.nodeName': 'node-a', 'status.hostIP': '10.0.0.7' };
  const env: Record<string, string> = {};
  for (const e of AGENT.env ?? []) {
    const value = e.value ?? fieldValues[e.valueFrom?.fieldRef?.fieldPath];
    if (value === undefined) throw new Error(`env ${e.name}: no value for the test`);
    env[e.name] = value;
  }
  return (AGENT.args as string[]).map((a) => expand(a, env));
}

function readFrom(files: Map<string, string>) {
  return (path: string) => {
    const text = files.get(path);
    if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    return text;
  };
}

describe('the KubeletConfiguration and the agent flags', () => {
  test('the ConfigMap carries kubelet-config.yaml verbatim, and the --config loader takes it without a warning', () => {
    const [cm] = of('ConfigMap');
    expect(cm.data['kubelet-config.yaml']).toBe(CONFIG_TEXT);
    const file = parseKubeletConfig(CONFIG_TEXT, 'kubelet-config.yaml');
    expect(file.warnings).toEqual([]);
  });

  test("the DaemonSet's args parse with the agent's flag parser: the node's name and IP, the kubelet paths, in-cluster API", () => {
    const flags = parseFlags(containerArgs(), 'the-pods-hostname', readFrom(configMapFiles()));
    expect(flags.warnings).toEqual([]);
    expect(flags.config).toBe('/etc/nodeagent/kubelet-config.yaml');
    expect(flags.nodeName).toBe('node-a');
    expect(flags.nodeIp).toBe('10.0.0.7');
    // No --kubeconfig: the in-cluster configuration (the pod's ServiceAccount).
    expect(flags.kubeconfig).toBeUndefined();
    expect(flags.runtimeEndpoint).toBe(DEFAULT_CRI_ENDPOINT);
    expect(flags.rootDir).toBe(DEFAULT_ROOT_DIR);
    expect(flags.podLogsRoot).toBe(DEFAULT_POD_LOGS_ROOT);
    expect(flags.failSwapOn).toBe(true);
    expect(flags.kubeletServer).toMatchObject({
      port: 10250,
      healthzPort: 10248,
      healthzBindAddress: '127.0.0.1',
      anonymousAuth: false,
      authenticationTokenWebhook: true,
      authorizationMode: 'Webhook',
      clientCaFile: '/etc/kubernetes/pki/ca.crt',
    });
  });

  test('a typo in the config or an unknown arg would be refused (the checks above can fail)', () => {
    const files = configMapFiles();
    files.set('/etc/nodeagent/kubelet-config.yaml', `${CONFIG_TEXT}maxPod: 10\n`);
    expect(() => parseFlags(containerArgs(), 'h', readFrom(files))).toThrow(/unknown field "maxPod"/);
    expect(() =>
      parseFlags([...containerArgs(), '--no-such-flag'], 'h', readFrom(configMapFiles())),
    ).toThrow();
  });
});

describe('the DaemonSet pod', () => {
  const flags = parseFlags(containerArgs(), 'h', readFrom(configMapFiles()));
  const hostPathOf = (mountPath: string) => {
    const mount = AGENT.volumeMounts.find((m: any) => m.mountPath === mountPath);
    const volume = POD.volumes.find((v: any) => v.name === mount?.name);
    return { mount, hostPath: volume?.hostPath };
  };

  test('host paths: the agent’s root dir (Bidirectional), pod logs root and containerd socket, each at the same path inside', () => {
    const socket = DEFAULT_CRI_ENDPOINT.slice('unix://'.length);
    for (const path of [flags.rootDir as string, flags.podLogsRoot as string, socket]) {
      const { mount, hostPath } = hostPathOf(path);
      expect(hostPath?.path, path).toBe(path);
      expect(mount.readOnly ?? false, path).toBe(false);
    }
    expect(hostPathOf(DEFAULT_ROOT_DIR).mount.mountPropagation).toBe('Bidirectional');
    expect(hostPathOf(socket).hostPath.type).toBe('Socket');
    // Every host path is mounted where it is on the host: the agent hands host paths to containerd.
    for (const mount of AGENT.volumeMounts) {
      const volume = POD.volumes.find((v: any) => v.name === mount.name);
      if (volume.hostPath) expect(mount.mountPath).toBe(volume.hostPath.path);
    }
    expect(hostPathOf('/sys/fs/cgroup').hostPath).toMatchObject({ path: '/sys/fs/cgroup' });
    expect(hostPathOf('/lib/modules').mount.readOnly).toBe(true);
    expect(hostPathOf('/run/xtables.lock').hostPath).toMatchObject({ type: 'FileOrCreate' });
    // The client CA of the kubelet API is under a mounted host path.
    const ca = flags.kubeletServer.clientCaFile as string;
    expect(hostPathOf(dirname(ca)).hostPath.path).toBe(dirname(ca));
  });

  test('privileged, host network and PID, every taint tolerated, node-critical, liveness on the healthz port', () => {
    expect(POD.hostNetwork).toBe(true);
    expect(POD.hostPID).toBe(true);
    expect(AGENT.securityContext.privileged).toBe(true);
    expect(POD.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(POD.priorityClassName).toBe('system-node-critical');
    expect(POD.serviceAccountName).toBe(of('ServiceAccount')[0].metadata.name);
    expect(AGENT.livenessProbe.httpGet).toEqual({
      host: flags.kubeletServer.healthzBindAddress,
      port: flags.kubeletServer.healthzPort,
      path: '/healthz',
    });
    expect(AGENT.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    const version = JSON.parse(
      readFileSync(join(REPO, 'examples/reference-agent/package.json'), 'utf8'),
    ).version;
    expect(AGENT.image).toMatch(new RegExp(`:${version.replaceAll('.', '\\.')}$`));
  });
});

describe('RBAC', () => {
  const rulesOf = (file: string) =>
    docs(readFileSync(join(REPO, file), 'utf8')).filter((m) => m.kind === 'ClusterRole' || m.kind === 'Role');
  const AGENT_ROLES = rulesOf('examples/reference-agent/deploy/rbac.yaml');
  const PROXIER_ROLES = rulesOf('packages/proxier/deploy/rbac.yaml');
  // Upstream's bootstrap ClusterRole system:node-proxier (plugin/pkg/auth/authorizer/rbac/
  // bootstrappolicy/testdata/cluster-roles.yaml); the mini-apiserver does not bootstrap it.
  const NODE_PROXIER = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:node-proxier' },
    rules: [
      { apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    ],
  };
  const RESOURCE_OF: Record<string, string> = {
    ClusterRole: 'clusterroles',
    ClusterRoleBinding: 'clusterrolebindings',
    Role: 'roles',
    RoleBinding: 'rolebindings',
  };
  const sa = of('ServiceAccount')[0].metadata;
  const user = (namespace: string, name: string): UserInfo => ({
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  });
  const SA = user(sa.namespace, sa.name);
  let server: MiniApiServer;
  let rbac: RbacAuthorizer;
  beforeAll(async () => {
    server = await startMiniApiServer();
    server.store.create('clusterroles', NODE_PROXIER as KubeObject);
    for (const m of MANIFESTS) if (RESOURCE_OF[m.kind]) server.store.create(RESOURCE_OF[m.kind] as string, m);
    rbac = new RbacAuthorizer(server.store);
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Each (verb, group, resource) of a role's rules, as a request in the role's namespace (or cluster-wide and in `default`). */
  function requests(role: any): RequestInfo[] {
    const out: RequestInfo[] = [];
    for (const rule of role.rules as PolicyRule[]) {
      for (const verb of rule.verbs)
        for (const apiGroup of rule.apiGroups ?? [])
          for (const full of rule.resources ?? []) {
            const [resource, subresource = ''] = full.split('/') as [string, string?];
            for (const namespace of role.kind === 'Role' ? [role.metadata.namespace] : ['', 'default'])
              out.push({
                isResourceRequest: true,
                path: '',
                verb,
                apiGroup,
                apiVersion: 'v1',
                namespace,
                resource,
                subresource,
                name: 'x',
              });
          }
    }
    return out;
  }

  test("the ServiceAccount may make every request rbac.yaml, the proxier's rbac.yaml and system:node-proxier allow", () => {
    const all = [...AGENT_ROLES, ...PROXIER_ROLES, NODE_PROXIER].flatMap(requests);
    expect(all.length).toBeGreaterThan(30);
    const refused = all.filter((r) => !rbac.authorize(SA, r).allowed);
    expect(refused).toEqual([]);
    // Another ServiceAccount may not: the bindings name this one.
    const other = user(sa.namespace, 'default');
    expect(all.filter((r) => rbac.authorize(other, r).allowed)).toEqual([]);
  });

  test('the roles grant nothing beyond rbac.yaml, the proxier’s rbac.yaml and system:node-proxier', () => {
    const allowedBy = new Set(
      [...AGENT_ROLES, ...PROXIER_ROLES, NODE_PROXIER]
        .flatMap(requests)
        .map((r) => `${r.verb} ${r.apiGroup}/${r.resource}/${r.subresource}`),
    );
    const granted = MANIFESTS.filter((m) => m.kind === 'ClusterRole' || m.kind === 'Role').flatMap(requests);
    expect(
      granted.filter((r) => !allowedBy.has(`${r.verb} ${r.apiGroup}/${r.resource}/${r.subresource}`)),
    ).toEqual([]);
    const refs = MANIFESTS.filter((m) => m.kind.endsWith('Binding')).map((b) => b.roleRef.name);
    expect(refs).toContain('system:node-proxier');
    for (const b of MANIFESTS.filter((m) => m.kind.endsWith('Binding')))
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace }]);
  });
});

describe.skipIf(kubectlMissing && !CI)('kubectl apply against the mini-apiserver', () => {
  let server: MiniApiServer;
  let dir: string;
  const kubectl = (...args: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        'kubectl',
        [...args, `--cache-dir=${join(dir, 'cache')}`],
        { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 30_000 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
      );
    });
  beforeAll(async () => {
    if (kubectlMissing)
      throw new Error('kubectl is required under CI=true (Debian package kubernetes-client)');
    dir = await mkdtemp(join(tmpdir(), 'deploy-manifests-'));
    server = await startMiniApiServer({ kubeconfigPath: join(dir, 'kubeconfig') });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('--dry-run=server: without the namespace, kube-apiserver refuses the namespaced objects', async () => {
    // NamespaceLifecycle admission runs on dry runs too: on a fresh cluster, apply for real (or
    // create the namespace first) before a dry run of the whole file.
    await expect(kubectl('apply', '--dry-run=server', '-f', join(DEPLOY, 'daemonset.yaml'))).rejects.toThrow(
      'namespaces "nodeagent-system" not found',
    );
  });

  test('--dry-run=server accepts every object of daemonset.yaml and stores none', async () => {
    await kubectl('create', 'namespace', 'nodeagent-system');
    const out = await kubectl('apply', '--dry-run=server', '-f', join(DEPLOY, 'daemonset.yaml'));
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(MANIFESTS.length);
    for (const line of lines) expect(line).toMatch(/ (created|configured|unchanged) \(server dry run\)$/);
    expect(out).toContain('daemonset.apps/nodeagent created (server dry run)');
    await expect(kubectl('get', 'daemonset', '-n', 'nodeagent-system', 'nodeagent')).rejects.toThrow(
      /not ?found/i,
    );
  });

  test('a broken DaemonSet is refused by the same check (the dry run can fail)', async () => {
    const broken = read('daemonset.yaml').replace(
      'matchLabels:\n      app.kubernetes.io/name: nodeagent-reference-agent',
      'matchLabels:\n      app.kubernetes.io/name: something-else',
    );
    expect(broken).not.toBe(read('daemonset.yaml'));
    const file = join(dir, 'broken.yaml');
    await writeFile(file, broken);
    await expect(kubectl('apply', '--dry-run=server', '-f', file)).rejects.toThrow(
      '`selector` does not match template `labels`',
    );
  });

  test('a real apply stores them (with the defaults kube-apiserver sets); a second apply changes nothing', async () => {
    const first = await kubectl('apply', '-f', join(DEPLOY, 'daemonset.yaml'));
    expect(first.trim().split('\n')).toHaveLength(MANIFESTS.length);
    const ds = JSON.parse(
      await kubectl('get', 'daemonset', '-n', 'nodeagent-system', 'nodeagent', '-o', 'json'),
    );
    expect(ds.spec.template.spec.hostNetwork).toBe(true);
    expect(ds.spec.template.spec.containers[0].args).toEqual(AGENT.args);
    expect(ds.spec.revisionHistoryLimit).toBe(10);
    const second = await kubectl('apply', '-f', join(DEPLOY, 'daemonset.yaml'));
    for (const line of second.trim().split('\n')) expect(line).toMatch(/ unchanged$/);
  });

  test('an upgrade (a new image, then a changed mount) applies as a patch that keeps the rest', async () => {
    const version = AGENT.image.split(':').pop();
    const upgraded = read('daemonset.yaml').replace(
      AGENT.image,
      AGENT.image.replace(`:${version}`, ':9.9.9'),
    );
    const file = join(dir, 'upgraded.yaml');
    await writeFile(file, upgraded);
    expect(await kubectl('apply', '-f', file)).toContain('daemonset.apps/nodeagent configured');
    let ds = JSON.parse(
      await kubectl('get', 'daemonset', '-n', 'nodeagent-system', 'nodeagent', '-o', 'json'),
    );
    expect(ds.spec.template.spec.containers[0].image).toMatch(/:9\.9\.9$/);
    expect(ds.spec.template.spec.containers[0].volumeMounts).toEqual(AGENT.volumeMounts);
    await writeFile(
      file,
      upgraded.replace('mountPath: /var/log/pods', 'mountPath: /var/log/pods\n              readOnly: false'),
    );
    expect(await kubectl('apply', '-f', file)).toContain('daemonset.apps/nodeagent configured');
    ds = JSON.parse(await kubectl('get', 'daemonset', '-n', 'nodeagent-system', 'nodeagent', '-o', 'json'));
    expect(ds.spec.template.spec.containers[0].image).toMatch(/:9\.9\.9$/);
    expect(ds.spec.template.spec.containers[0].volumeMounts).toHaveLength(AGENT.volumeMounts.length);
    expect(ds.spec.template.spec.containers[0].volumeMounts[2]).toEqual({
      name: 'pod-logs',
      mountPath: '/var/log/pods',
      readOnly: false,
    });
  });
});

describe('nodeagent.service', () => {
  const unit = read('nodeagent.service');
  const directive = (name: string) =>
    unit
      .split('\n')
      .filter((l) => l.startsWith(`${name}=`))
      .map((l) => l.slice(name.length + 1));
  const execStart = (directive('ExecStart')[0] as string).split(/\s+/);

  test.skipIf(systemdAnalyzeMissing && !CI)('systemd-analyze verify finds nothing to say', () => {
    if (systemdAnalyzeMissing)
      throw new Error('systemd-analyze is required under CI=true (Debian package systemd)');
    const r = spawnSync('systemd-analyze', ['verify', '--man=no', join(DEPLOY, 'nodeagent.service')], {
      encoding: 'utf8',
    });
    expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({
      status: 0,
      stderr: '',
      stdout: '',
    });
  });

  test("as the kubelet's unit: restarted always after 10 s, after containerd and the network", () => {
    expect(directive('Restart')).toEqual(['always']);
    expect(directive('RestartSec')).toEqual(['10']);
    expect(directive('StartLimitIntervalSec')).toEqual(['0']);
    expect(directive('After')[0]?.split(' ')).toEqual(
      expect.arrayContaining(['network-online.target', 'containerd.service']),
    );
    expect(directive('Conflicts')).toEqual(['kubelet.service']);
    expect(directive('WantedBy')).toEqual(['multi-user.target']);
  });

  test("ExecStart runs the agent's built bin with flags the agent accepts, the same config file", () => {
    expect(execStart[0]).toBe('/usr/bin/node');
    const script = relative('/opt/nodeagent', execStart[1] as string);
    expect(script).toBe('examples/reference-agent/dist/main.js');
    // The bin tsup builds (entry src/main.ts → dist/main.js); it exists once `npm run build` ran (CI builds first).
    expect(existsSync(join(REPO, 'examples/reference-agent/src/main.ts'))).toBe(true);
    if (CI || existsSync(join(REPO, script))) expect(existsSync(join(REPO, script))).toBe(true);
    const flags = parseFlags(
      execStart.slice(2),
      'host-1',
      readFrom(new Map([['/etc/nodeagent/kubelet-config.yaml', CONFIG_TEXT]])),
    );
    expect(flags.warnings).toEqual([]);
    expect(flags.nodeName).toBe('host-1');
    expect(flags.kubeconfig).toBe('/etc/nodeagent/kubeconfig');
    expect(flags.rootDir).toBe(DEFAULT_ROOT_DIR);
    expect(flags.podLogsRoot).toBe(DEFAULT_POD_LOGS_ROOT);
    expect(flags.runtimeEndpoint).toBe(DEFAULT_CRI_ENDPOINT);
  });
});

describe('Containerfile', () => {
  const text = read('Containerfile');
  // Instructions with their continuation lines joined, comments dropped.
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: (op as string).toUpperCase(), args: rest };
    });

  test('two node:22 bookworm stages; the build runs npm ci, npm run build, npm prune', () => {
    const froms = instructions.filter((i) => i.op === 'FROM').map((i) => i.args[0]);
    expect(froms).toEqual(['node:22-bookworm-slim', 'node:22-bookworm-slim']);
    const engines = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).engines.node as string;
    expect(Number(engines.match(/\d+/)?.[0])).toBeLessThanOrEqual(22);
    const runs = instructions.filter((i) => i.op === 'RUN').map((i) => i.args.join(' '));
    expect(runs.slice(0, 3)).toEqual([
      'npm ci --no-audit --no-fund',
      'npm run build',
      'npm prune --omit=dev --no-audit --no-fund',
    ]);
  });

  test('every COPY source exists in the build context (the repository root), and every workspace is copied', () => {
    const copied: string[] = [];
    for (const i of instructions.filter((x) => x.op === 'COPY' && !x.args[0]?.startsWith('--from'))) {
      for (const src of i.args.slice(0, -1)) {
        expect(existsSync(join(REPO, src)), src).toBe(true);
        copied.push(src.replace(/\/$/, ''));
      }
    }
    const workspaces = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).workspaces as string[];
    for (const w of workspaces) expect(copied, w).toContain(w.replace(/\/\*$/, ''));
    const ignore = read('Containerfile.dockerignore');
    expect(ignore).toMatch(/^\*\*\/node_modules$/m);
  });

  test('the entrypoint is the agent bin, where the build stage built it', () => {
    const entry = instructions.find((i) => i.op === 'ENTRYPOINT');
    const argv = JSON.parse(entry?.args.join(' ') ?? '[]') as string[];
    expect(argv[0]).toBe('node');
    const workdir = instructions.find((i) => i.op === 'WORKDIR')?.args[0] as string;
    expect(relative(workdir, argv[1] as string)).toBe('examples/reference-agent/dist/main.js');
    expect(argv[1]).toBe(execStartScript());
  });

  test.skipIf(aptCacheMissing && !CI)(
    'the apt packages exist in Debian (apt-cache show)',
    { timeout: 90_000 },
    () => {
      if (aptCacheMissing) throw new Error('apt-cache is required under CI=true');
      const install = instructions.find((i) => i.op === 'RUN' && i.args.includes('install'));
      const args = install?.args ?? [];
      const from = args.indexOf('--no-install-recommends') + 1;
      const to = args.indexOf('&&', from);
      const names = args.slice(from, to === -1 ? undefined : to);
      expect(
        names.every((a) => /^[a-z0-9][a-z0-9.+-]+$/.test(a)),
        names.join(' '),
      ).toBe(true);
      expect(names).toEqual(expect.arrayContaining(['iptables', 'nftables', 'ipset', 'conntrack', 'mount']));
      // One apt-cache run (each one loads the whole cache); local package lists are needed.
      const r = spawnSync('apt-cache', ['show', '--no-all-versions', ...names], { encoding: 'utf8' });
      if (
        r.status !== 0 &&
        /No packages found/.test(r.stderr) &&
        !CI &&
        spawnSync('apt-cache', ['show', 'bash']).status !== 0
      ) {
        console.warn(
          '\n*** apt-cache has no package lists (run apt-get update): not checking the names ***\n',
        );
        return;
      }
      expect(r.stderr).toBe('');
      const found = [...r.stdout.matchAll(/^Package: (\S+)$/gm)].map((m) => m[1]);
      expect(found.sort()).toEqual([...names].sort());
    },
  );
});

/** The agent script the systemd unit runs (under /opt/nodeagent). */
function execStartScript(): string {
  const line = read('nodeagent.service')
    .split('\n')
    .find((l) => l.startsWith('ExecStart=')) as string;
  return line.split(/\s+/)[1] as string;
}
