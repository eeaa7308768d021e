import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { MountPropagation, NamespaceMode, Protocol, SecurityProfile_ProfileType } from '@nodeagent/cri';
import { afterAll, describe, expect, it } from 'vitest';
import { type ContainerConfigContext, generateContainerConfig } from '../src/container-config.js';
import { hashContainer } from '../src/container-hash.js';
import { podDnsConfig } from '../src/dns.js';
import { sandboxHostname } from '../src/hostname.js';
import { ContainerConfigError } from '../src/index.js';
import { generatePodSandboxConfig, sysctlToDots } from '../src/sandbox-config.js';

const dir = mkdtempSync(join(tmpdir(), 'kuberuntime-cfg-'));
const resolvConf = join(dir, 'resolv.conf');
writeFileSync(resolvConf, 'nameserver 192.0.2.53\nsearch corp.example lab.example\noptions edns0\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pod: V1Pod = {
  metadata: {
    name: 'web',
    namespace: 'shop',
    uid: '1111-2222',
    labels: { app: 'web' },
    annotations: { team: 'a&b' },
    deletionGracePeriodSeconds: 10,
  },
  spec: {
    nodeName: 'node-1',
    serviceAccountName: 'sa',
    terminationGracePeriodSeconds: 30,
    securityContext: {
      runAsUser: 1000,
      fsGroup: 2000,
      sysctls: [{ name: 'net/ipv4/ip_local_port_range', value: '1024 65000' }],
    },
    volumes: [
      { name: 'cache', emptyDir: {} },
      { name: 'host', hostPath: { path: '/srv/data', type: 'DirectoryOrCreate' } },
    ],
    containers: [
      {
        name: 'app',
        image: 'busybox:1.36',
        command: ['/bin/sh', '-c', 'echo $(GREETING) $(MISSING) $$(ESCAPED)'],
        args: ['$(POD_NAME)'],
        workingDir: '/work',
        ports: [
          { name: 'http', containerPort: 8080, hostPort: 30080, protocol: 'TCP' },
          { containerPort: 53, protocol: 'UDP' },
        ],
        env: [
          { name: 'NAME', value: 'world' },
          { name: 'GREETING', value: 'hello $(NAME)' },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'POD_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'POD_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
          { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
          { name: 'LABELS', valueFrom: { fieldRef: { fieldPath: 'metadata.labels' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
          {
            name: 'MEM_LIMIT_MI',
            valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } },
          },
          { name: 'CPU_REQ_M', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
        ],
        resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '1500m', memory: '128Mi' } },
        volumeMounts: [
          { name: 'cache', mountPath: '/cache' },
          { name: 'host', mountPath: '/data', readOnly: true, mountPropagation: 'HostToContainer' },
        ],
        lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 1 && echo <bye>'] } } },
        securityContext: {
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
      },
    ],
  },
};

const ctx: ContainerConfigContext = {
  podIp: '10.88.0.7',
  podIps: ['10.88.0.7', 'fd00::7'],
  hostIps: ['192.0.2.10'],
  nodeAllocatable: { cpuMilli: 4000n, memoryBytes: 8n * 1024n ** 3n },
  memoryCapacityBytes: 8n * 1024n ** 3n,
  podsRoot: '/var/lib/kubelet/pods',
  terminationFileId: 'deadbeef',
};
const container = pod.spec?.containers[0];
if (container === undefined) throw new Error('fixture');

describe('container config (golden)', () => {
  const { config, prepare } = generateContainerConfig(pod, container, 3, 'sha256:img', ctx);

  it('labels and annotations exactly as the kubelet sets them', () => {
    expect(config.labels).toEqual({
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'shop',
      'io.kubernetes.pod.uid': '1111-2222',
      'io.kubernetes.container.name': 'app',
    });
    expect(config.annotations).toEqual({
      'io.kubernetes.container.hash': hashContainer(container).toString(16),
      'io.kubernetes.container.restartCount': '3',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.pod.deletionGracePeriod': '10',
      'io.kubernetes.pod.terminationGracePeriod': '30',
      'io.kubernetes.container.preStopHandler':
        '{"exec":{"command":["/bin/sh","-c","sleep 1 \\u0026\\u0026 echo \\u003cbye\\u003e"]}}',
      'io.kubernetes.container.ports':
        '[{"name":"http","hostPort":30080,"containerPort":8080,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}]',
    });
    expect(config.metadata).toEqual({ name: 'app', attempt: 3 });
    expect(config.logPath).toBe('app/3.log');
    expect(config.image).toMatchObject({ image: 'sha256:img', userSpecifiedImage: 'busybox:1.36' });
    expect(config.workingDir).toBe('/work');
  });

  it('env with $(VAR) expansion and downward API values', () => {
    expect(
      Object.fromEntries(config.envs.map((e) => [e.key, Buffer.from(e.value).toString('utf8')])),
    ).toEqual({
      NAME: 'world',
      GREETING: 'hello world',
      POD_NAME: 'web',
      POD_NS: 'shop',
      POD_UID: '1111-2222',
      NODE: 'node-1',
      SA: 'sa',
      POD_IP: '10.88.0.7',
      POD_IPS: '10.88.0.7,fd00::7',
      HOST_IP: '192.0.2.10',
      LABELS: 'app="web"',
      APP: 'web',
      CPU_LIMIT: '2',
      MEM_LIMIT_MI: '128',
      CPU_REQ_M: '250',
    });
    expect(config.command).toEqual(['/bin/sh', '-c', 'echo hello world $(MISSING) $(ESCAPED)']);
    expect(config.args).toEqual(['web']);
  });

  it('resources and security context', () => {
    expect(config.linux?.resources).toMatchObject({
      cpuShares: 256n,
      cpuQuota: 150000n,
      cpuPeriod: 100000n,
      memoryLimitInBytes: 134217728n,
    });
    const sc = config.linux?.securityContext;
    expect(sc).toMatchObject({
      readonlyRootfs: true,
      noNewPrivs: true,
      privileged: false,
      runAsUser: { value: 1000n },
      supplementalGroups: [2000n],
      capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
      seccomp: { profileType: SecurityProfile_ProfileType.RuntimeDefault },
      namespaceOptions: { network: NamespaceMode.POD, pid: NamespaceMode.CONTAINER, ipc: NamespaceMode.POD },
    });
    expect(sc?.maskedPaths).toContain('/proc/kcore');
  });

  it('mounts: emptyDir under the pod dir, hostPath, termination message file', () => {
    expect(config.mounts.map((m) => [m.containerPath, m.hostPath, m.readonly, m.propagation])).toEqual([
      [
        '/cache',
        '/var/lib/kubelet/pods/1111-2222/volumes/kubernetes.io~empty-dir/cache',
        false,
        MountPropagation.PROPAGATION_PRIVATE,
      ],
      ['/data', '/srv/data', true, MountPropagation.PROPAGATION_HOST_TO_CONTAINER],
      [
        '/dev/termination-log',
        '/var/lib/kubelet/pods/1111-2222/containers/app/deadbeef',
        false,
        MountPropagation.PROPAGATION_PRIVATE,
      ],
    ]);
    expect(prepare.map((p) => [p.path, p.kind])).toEqual([
      ['/var/lib/kubelet/pods/1111-2222/volumes/kubernetes.io~empty-dir/cache', 'directory'],
      ['/srv/data', 'directory'],
      ['/var/lib/kubelet/pods/1111-2222/containers/app/deadbeef', 'file'],
    ]);
  });

  it('mounts: with podVolumes (a volume manager) the set-up host paths as they are, subPath below them', () => {
    const cm: V1Pod = {
      ...pod,
      spec: { ...pod.spec, containers: [], volumes: [{ name: 'cm', configMap: { name: 'x' } }] },
    };
    const podVolumes = new Map([
      ['cm', { hostPath: '/root/pods/u/volumes/kubernetes.io~configmap/cm', readOnly: true }],
    ]);
    const app = {
      name: 'a',
      volumeMounts: [
        { name: 'cm', mountPath: '/etc/cfg', readOnly: true },
        { name: 'cm', mountPath: '/etc/one.conf', subPath: 'one.conf' },
      ],
    };
    const out = generateContainerConfig(cm, app, 0, 'i', { ...ctx, podVolumes });
    expect(out.config.mounts.slice(0, 2).map((m) => [m.containerPath, m.hostPath, m.readonly])).toEqual([
      ['/etc/cfg', '/root/pods/u/volumes/kubernetes.io~configmap/cm', true],
      // The plugin's read-only attribute wins over the mount's readOnly: false (upstream mustMountRO).
      ['/etc/one.conf', '/root/pods/u/volumes/kubernetes.io~configmap/cm/one.conf', true],
    ]);
    // Nothing to create for the volume itself; the subPath is resolved inside it.
    expect(out.prepare.map((p) => [p.path, p.subPathOf?.volumePath])).toEqual([
      [
        '/root/pods/u/volumes/kubernetes.io~configmap/cm/one.conf',
        '/root/pods/u/volumes/kubernetes.io~configmap/cm',
      ],
      ['/var/lib/kubelet/pods/1111-2222/containers/a/deadbeef', undefined],
    ]);
    // A volume the manager did not set up is refused as upstream's makeMounts does.
    expect(() => generateContainerConfig(cm, app, 0, 'i', { ...ctx, podVolumes: new Map() })).toThrow(
      'cannot find volume "cm" to mount into container "a"',
    );
  });

  it('unsupported volumes and missing env sources are typed config errors', () => {
    const bad: V1Pod = {
      ...pod,
      spec: { ...pod.spec, containers: [], volumes: [{ name: 'cm', configMap: { name: 'x' } }] },
    };
    expect(() =>
      generateContainerConfig(
        bad,
        { name: 'a', volumeMounts: [{ name: 'cm', mountPath: '/x' }] },
        0,
        'i',
        ctx,
      ),
    ).toThrow(ContainerConfigError);
    const env = {
      name: 'a',
      env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }],
    };
    expect(() => generateContainerConfig(pod, env, 0, 'i', ctx)).toThrow('configmap "cfg" not found');
    const optional = {
      name: 'a',
      env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k', optional: true } } }],
    };
    expect(generateContainerConfig(pod, optional, 0, 'i', ctx).config.envs).toEqual([]);
    const sources = { configMap: () => ({ k: 'v' }), secret: () => undefined };
    expect(generateContainerConfig(pod, env, 0, 'i', { ...ctx, envSources: sources }).config.envs).toEqual([
      { key: 'X', value: Buffer.from('v') },
    ]);
  });

  it('a Secret value that is not UTF-8 reaches the runtime byte for byte, also through $(VAR)', () => {
    const binary = Uint8Array.from([0xff, 0x00, 0xfe]);
    const sources = { configMap: () => undefined, secret: () => ({ bin: binary, text: 'ü' }) };
    const container = {
      name: 'a',
      env: [
        { name: 'BIN', valueFrom: { secretKeyRef: { name: 's', key: 'bin' } } },
        { name: 'TEXT', valueFrom: { secretKeyRef: { name: 's', key: 'text' } } },
        { name: 'BOTH', value: '<$(BIN)|$(TEXT)>' },
      ],
    };
    const envs = generateContainerConfig(pod, container, 0, 'i', { ...ctx, envSources: sources }).config.envs;
    expect(envs.map((e) => [e.key, [...e.value]])).toEqual([
      ['BIN', [0xff, 0x00, 0xfe]],
      ['TEXT', [0xc3, 0xbc]],
      ['BOTH', [0x3c, 0xff, 0x00, 0xfe, 0x7c, 0xc3, 0xbc, 0x3e]],
    ]);
  });
});

describe('sandbox config (golden)', () => {
  const config = generatePodSandboxConfig(pod, 2, {
    podLogsRoot: '/logs',
    clusterDns: ['10.96.0.10'],
    clusterDomain: 'cluster.local',
    resolvConf,
  });

  it('metadata, labels, annotations, log directory, hostname', () => {
    expect(config.metadata).toEqual({ name: 'web', namespace: 'shop', uid: '1111-2222', attempt: 2 });
    expect(config.labels).toEqual({
      app: 'web',
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'shop',
      'io.kubernetes.pod.uid': '1111-2222',
    });
    expect(config.annotations).toEqual({ team: 'a&b' });
    expect(config.logDirectory).toBe('/logs/shop_web_1111-2222');
    expect(config.hostname).toBe('web');
  });

  it('ClusterFirst DNS: cluster server, cluster searches then the node ones, ndots:5', () => {
    expect(config.dnsConfig).toEqual({
      servers: ['10.96.0.10'],
      searches: [
        'shop.svc.cluster.local',
        'svc.cluster.local',
        'cluster.local',
        'corp.example',
        'lab.example',
      ],
      options: ['ndots:5'],
    });
  });

  it('port mappings, sysctls, namespaces, sandbox security', () => {
    expect(config.portMappings).toEqual([
      { protocol: Protocol.TCP, containerPort: 8080, hostPort: 30080, hostIp: '' },
      { protocol: Protocol.UDP, containerPort: 53, hostPort: 0, hostIp: '' },
    ]);
    expect(config.linux?.sysctls).toEqual({ 'net.ipv4.ip_local_port_range': '1024 65000' });
    expect(config.linux?.securityContext).toMatchObject({
      runAsUser: { value: 1000n },
      supplementalGroups: [2000n],
      privileged: false,
      seccomp: { profileType: SecurityProfile_ProfileType.RuntimeDefault },
      namespaceOptions: { network: NamespaceMode.POD },
    });
  });

  it('host network / PID / IPC pods get NODE namespaces and no hostname', () => {
    const host: V1Pod = {
      ...pod,
      spec: { ...pod.spec, containers: [], hostNetwork: true, hostPID: true, hostIPC: true },
    };
    const c = generatePodSandboxConfig(host, 0, { resolvConf });
    expect(c.hostname).toBe('');
    expect(c.linux?.securityContext?.namespaceOptions).toMatchObject({
      network: NamespaceMode.NODE,
      pid: NamespaceMode.NODE,
      ipc: NamespaceMode.NODE,
    });
  });
});

describe('DNS policies', () => {
  const base: V1Pod = { metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [] } };
  it.each([
    [
      'Default uses the node resolv.conf',
      { dnsPolicy: 'Default' },
      { servers: ['192.0.2.53'], searches: ['corp.example', 'lab.example'], options: ['edns0'] },
    ],
    [
      'None with dnsConfig',
      {
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['1.1.1.1'],
          searches: ['a.example'],
          options: [{ name: 'ndots', value: '2' }, { name: 'rotate' }],
        },
      },
      { servers: ['1.1.1.1'], searches: ['a.example'], options: ['ndots:2', 'rotate'] },
    ],
    [
      'ClusterFirst + dnsConfig options override',
      { dnsPolicy: 'ClusterFirst', dnsConfig: { options: [{ name: 'ndots', value: '1' }] } },
      { servers: ['10.96.0.10'], options: ['ndots:1'] },
    ],
    [
      'ClusterFirst on host network falls back to Default',
      { dnsPolicy: 'ClusterFirst', hostNetwork: true },
      { servers: ['192.0.2.53'] },
    ],
    [
      'ClusterFirstWithHostNet',
      { dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true },
      { servers: ['10.96.0.10'] },
    ],
  ])('%s', (_t, spec, expected) => {
    const p = { ...base, spec: { ...base.spec, ...spec } } as V1Pod;
    expect(podDnsConfig(p, { clusterDns: ['10.96.0.10'], resolvConf })).toMatchObject(expected);
  });

  it('no cluster DNS: ClusterFirst falls back to Default; no resolv.conf: localhost', () => {
    expect(podDnsConfig(base, { resolvConf })).toMatchObject({ servers: ['192.0.2.53'] });
    expect(podDnsConfig(base, { resolvConf: '' })).toEqual({
      servers: ['127.0.0.1'],
      searches: ['.'],
      options: [],
    });
  });
});

describe('small helpers', () => {
  it.each([
    ['net.ipv4.ip_forward', 'net.ipv4.ip_forward'],
    ['net/ipv4/ip_forward', 'net.ipv4.ip_forward'],
    ['net/ipv4/conf/eno2.100/rp_filter', 'net.ipv4.conf.eno2/100.rp_filter'],
  ])('sysctl %s → %s', (a, b) => expect(sysctlToDots(a)).toBe(b));

  it('hostname: spec.hostname, truncation to 63, FQDN', () => {
    const long = 'a'.repeat(62) + '-b';
    expect(sandboxHostname({ metadata: { name: long }, spec: { containers: [] } })).toBe('a'.repeat(62));
    const fqdn: V1Pod = {
      metadata: { name: 'p', namespace: 'ns' },
      spec: { containers: [], hostname: 'h', subdomain: 's', setHostnameAsFQDN: true },
    };
    expect(sandboxHostname(fqdn)).toBe('h.s.ns.svc.cluster.local');
  });
});
