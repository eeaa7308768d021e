// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { humanDuration } from '../src/table-output.js';
import { formatLabels, podStatusCells } from '../src/table-printers.js';
import { call, start } from './helpers.js';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString();

function cells(pod: any) {
  return podStatusCells(pod, NOW, humanDuration);
}

const running = { running: {} };

// The cases of upstream's TestPrintPod / TestPrintPodWithRestartableInitContainer
// (pkg/printers/internalversion/printers_test.go), READY, STATUS and RESTARTS cells.
describe('printPod STATUS, READY and RESTARTS', () => {
  test('restarts of all containers; ready counts ready running ones; phase as status', () => {
    const pod = {
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'podPhase',
        containerStatuses: [{ ready: true, restartCount: 3, state: running }, { restartCount: 3 }],
      },
    };
    expect(cells(pod)).toMatchObject({ ready: '1/2', reason: 'podPhase', restarts: '6' });
  });

  test('the last restart time is shown as "(10s ago)"', () => {
    const pod = {
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'podPhase',
        containerStatuses: [
          {
            ready: true,
            restartCount: 3,
            state: running,
            lastState: { terminated: { finishedAt: ago(10) } },
          },
          { restartCount: 3 },
        ],
      },
    };
    expect(cells(pod).restarts).toBe('6 (10s ago)');
  });

  test('a waiting or terminated reason replaces the phase; no reason gives ExitCode:/Signal:', () => {
    const base = (state: any) => ({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'podPhase',
        containerStatuses: [
          { ready: true, restartCount: 3, state: running },
          { restartCount: 3, state },
        ],
      },
    });
    expect(cells(base({ waiting: { reason: 'ContainerWaitingReason' } })).reason).toBe(
      'ContainerWaitingReason',
    );
    expect(cells(base({ terminated: { reason: 'ContainerTerminatedReason' } })).reason).toBe(
      'ContainerTerminatedReason',
    );
    expect(cells(base({ terminated: { exitCode: 1 } })).reason).toBe('ExitCode:1');
    expect(cells(base({ terminated: { exitCode: 1, signal: 9 } })).reason).toBe('Signal:9');
    expect(cells(base({ waiting: { reason: 'CrashLoopBackOff' } })).reason).toBe('CrashLoopBackOff');
  });

  test('Completed with a container still running is Running (Ready condition) or NotReady', () => {
    const pod = (ready: boolean) => ({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        containerStatuses: [
          { ready: true, state: running },
          { state: { terminated: { reason: 'Completed', exitCode: 0 } } },
        ],
      },
    });
    // Statuses are walked from the last one: b sets Completed, a is running.
    expect(cells(pod(true)).reason).toBe('Running');
    expect(cells(pod(false)).reason).toBe('NotReady');
  });

  test('init containers: Init:i/n, Init:<reason>, Init:ExitCode:, and restarts of init containers', () => {
    const pod = (initStatuses: any[], initialized = false) => ({
      spec: { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'a' }] },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'Initialized', status: initialized ? 'True' : 'False' }],
        initContainerStatuses: initStatuses,
        containerStatuses: [{ state: { waiting: { reason: 'PodInitializing' } } }],
      },
    });
    expect(
      cells(
        pod([
          { name: 'i1', state: running },
          { name: 'i2', state: {} },
        ]),
      ).reason,
    ).toBe('Init:0/2');
    expect(
      cells(
        pod([
          { name: 'i1', state: { terminated: { exitCode: 0 } } },
          { name: 'i2', state: running },
        ]),
      ).reason,
    ).toBe('Init:1/2');
    expect(
      cells(pod([{ name: 'i1', restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } } }])),
    ).toMatchObject({ reason: 'Init:CrashLoopBackOff', restarts: '4' });
    expect(cells(pod([{ name: 'i1', state: { terminated: { exitCode: 2 } } }])).reason).toBe(
      'Init:ExitCode:2',
    );
    expect(cells(pod([{ name: 'i1', state: { terminated: { exitCode: 2, reason: 'Error' } } }])).reason).toBe(
      'Init:Error',
    );
  });

  test('a restartable (sidecar) init container counts in READY once started', () => {
    const pod = {
      spec: { initContainers: [{ name: 'side', restartPolicy: 'Always' }], containers: [{ name: 'a' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }],
        initContainerStatuses: [
          { name: 'side', started: true, ready: true, restartCount: 2, state: running },
        ],
        containerStatuses: [{ ready: true, restartCount: 1, state: running }],
      },
    };
    expect(cells(pod)).toMatchObject({ ready: '2/2', reason: 'Running', restarts: '3' });
  });

  test('Terminating while deleted, Unknown for NodeLost, SchedulingGated', () => {
    const deleted = {
      metadata: { deletionTimestamp: ago(1) },
      spec: { containers: [{ name: 'a' }] },
      status: { phase: 'Running' },
    };
    expect(cells(deleted).reason).toBe('Terminating');
    expect(cells({ ...deleted, status: { phase: 'Running', reason: 'NodeLost' } }).reason).toBe('Unknown');
    expect(cells({ ...deleted, status: { phase: 'Succeeded' } }).reason).toBe('Succeeded');
    expect(
      cells({
        spec: { containers: [{ name: 'a' }] },
        status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', reason: 'SchedulingGated' }] },
      }).reason,
    ).toBe('SchedulingGated');
  });

  test('Succeeded and Failed pods carry the Completed row condition', () => {
    expect(cells({ spec: {}, status: { phase: 'Succeeded' } }).conditions).toEqual([
      {
        type: 'Completed',
        status: 'True',
        reason: 'Succeeded',
        message: 'The pod has completed successfully.',
      },
    ]);
    expect(cells({ spec: {}, status: { phase: 'Failed' } }).conditions[0]?.reason).toBe('Failed');
  });

  test('formatLabels sorts and shows <none> when empty', () => {
    expect(formatLabels({ b: '2', a: '1' })).toBe('a=1,b=2');
    expect(formatLabels(undefined)).toBe('<none>');
  });
});

describe('Table over HTTP', () => {
  let server: MiniApiServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

  test('pods: the columns of kube-apiserver, wide ones with priority 1', async () => {
    server = await start();
    await call(server, 'POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'app', image: 'nginx' }], nodeName: 'n1' },
    });
    const res = await fetch(`${server.url}/api/v1/namespaces/default/pods`, { headers: { accept: TABLE } });
    const table = (await res.json()) as any;
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c: any) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Ready', 0],
      ['Status', 0],
      ['Restarts', 0],
      ['Age', 0],
      ['IP', 1],
      ['Node', 1],
      ['Nominated Node', 1],
      ['Readiness Gates', 1],
    ]);
    expect(table.rows[0].cells).toEqual([
      'web',
      '0/1',
      'Pending',
      '0',
      expect.any(String),
      '<none>',
      'n1',
      '<none>',
      '<none>',
    ]);
  });

  test('Metadata (the default): PartialObjectMetadata; Object: the whole object; None: no object; other values: 400', async () => {
    server = await start();
    await call(server, 'POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'app', image: 'nginx' }], nodeName: 'n1' },
    });
    const get = async (path: string) => {
      const res = await fetch(`${server?.url}${path}`, { headers: { accept: TABLE } });
      return { code: res.status, body: (await res.json()) as any };
    };
    for (const path of ['/api/v1/namespaces/default/pods', '/api/v1/namespaces/default/pods/web']) {
      const byDefault = await get(path);
      expect(byDefault.body.rows[0].object).toMatchObject({
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { name: 'web' },
      });
      expect(byDefault.body.rows[0].object.spec).toBeUndefined();
      expect((await get(`${path}?includeObject=Metadata`)).body.rows[0].object.kind).toBe(
        'PartialObjectMetadata',
      );
      const whole = (await get(`${path}?includeObject=Object`)).body.rows[0].object;
      expect(whole).toMatchObject({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'web' } });
      expect(whole.spec.nodeName).toBe('n1');
      const none = (await get(`${path}?includeObject=None`)).body.rows[0];
      expect(none.cells[0]).toBe('web');
      expect('object' in none).toBe(false);
      const bad = await get(`${path}?includeObject=All`);
      expect(bad.code).toBe(400);
      expect(bad.body).toMatchObject({
        kind: 'Status',
        reason: 'BadRequest',
        message: 'unrecognized includeObject value: "All"',
      });
    }
  });
});

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl get prints kube-apiserver columns',
  () => {
    const h = useKubectlServer('mini-apiserver-kubectl-table-');
    const kubectl = h.kubectl;
    /** Rows split on runs of 2+ spaces (kubectl's tabwriter padding); AGE cells replaced. */
    function rows(text: string): string[][] {
      return text
        .trimEnd()
        .split('\n')
        .map((l) => l.split(/ {2,}/).map((c) => c.trim()));
    }

    test('get pods -o wide: READY, STATUS (CrashLoopBackOff), RESTARTS, IP, NODE', async () => {
      const s = h.server.store;
      s.create('pods', {
        metadata: { name: 'crash', namespace: 'default' },
        spec: { containers: [{ name: 'app', image: 'busybox' }], nodeName: 'node-a' },
      });
      const pod = s.get('pods', 'default', 'crash');
      pod.status = {
        phase: 'Running',
        podIP: '10.0.0.7',
        podIPs: [{ ip: '10.0.0.7' }],
        containerStatuses: [
          { name: 'app', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      };
      s.update('pods', pod, { subresource: 'status' });
      const out = rows(await kubectl('get', 'pods', '-o', 'wide'));
      expect(out[0]).toEqual([
        'NAME',
        'READY',
        'STATUS',
        'RESTARTS',
        'AGE',
        'IP',
        'NODE',
        'NOMINATED NODE',
        'READINESS GATES',
      ]);
      expect(out[1]).toEqual([
        'crash',
        '0/1',
        'CrashLoopBackOff',
        '5',
        expect.stringMatching(/^\d+s$/),
        '10.0.0.7',
        'node-a',
        '<none>',
        '<none>',
      ]);
      expect(rows(await kubectl('get', 'pods'))[0]).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    });

    test('get events --sort-by=.lastTimestamp: sorted on the whole objects (includeObject=Object)', async () => {
      const event = (name: string, reason: string, at: string) =>
        h.server.store.create('events', {
          metadata: { name, namespace: 'default' },
          involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
          reason,
          message: `${reason} happened`,
          type: 'Normal',
          firstTimestamp: at,
          lastTimestamp: at,
          count: 1,
          source: { component: 'kubelet' },
        });
      event('web.2', 'Later', '2026-01-01T00:00:02Z');
      event('web.1', 'Earlier', '2026-01-01T00:00:01Z');
      event('web.3', 'Latest', '2026-01-01T00:00:03Z');
      const out = rows(await kubectl('get', 'events', '--sort-by=.lastTimestamp'));
      expect(out[0]).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
      expect(out.slice(1).map((r) => r[2])).toEqual(['Earlier', 'Later', 'Latest']);
    });

    test('get nodes (-o wide): STATUS, ROLES, VERSION, addresses and node info', async () => {
      h.server.store.create('nodes', {
        metadata: { name: 'node-a', labels: { 'node-role.kubernetes.io/control-plane': '' } },
        spec: { unschedulable: true },
      });
      const node = h.server.store.get('nodes', undefined, 'node-a');
      node.status = {
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [{ type: 'InternalIP', address: '192.168.1.10' }],
        nodeInfo: {
          kubeletVersion: 'v1.32.4',
          osImage: 'Debian GNU/Linux 12',
          kernelVersion: '6.1.0',
          containerRuntimeVersion: 'containerd://1.7.24',
        },
      };
      h.server.store.update('nodes', node, { subresource: 'status' });
      const out = rows(await kubectl('get', 'nodes', '-o', 'wide'));
      expect(out[0]).toEqual([
        'NAME',
        'STATUS',
        'ROLES',
        'AGE',
        'VERSION',
        'INTERNAL-IP',
        'EXTERNAL-IP',
        'OS-IMAGE',
        'KERNEL-VERSION',
        'CONTAINER-RUNTIME',
      ]);
      expect(out[1]).toEqual([
        'node-a',
        'Ready,SchedulingDisabled',
        'control-plane',
        expect.stringMatching(/^\d+s$/),
        'v1.32.4',
        '192.168.1.10',
        '<none>',
        'Debian GNU/Linux 12',
        '6.1.0',
        'containerd://1.7.24',
      ]);
    });

    test('get svc -o wide: TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), SELECTOR', async () => {
      h.server.store.create('services', {
        metadata: { name: 'np', namespace: 'default' },
        spec: {
          type: 'NodePort',
          clusterIP: '10.96.0.20',
          clusterIPs: ['10.96.0.20'],
          selector: { app: 'np' },
          ports: [{ port: 80, targetPort: 8080, nodePort: 30080, protocol: 'TCP' }],
        },
      });
      h.server.store.create('services', {
        metadata: { name: 'ext', namespace: 'default' },
        spec: { type: 'ExternalName', externalName: 'db.example.com' },
      });
      const out = rows(await kubectl('get', 'svc', 'np', 'ext', '-o', 'wide'));
      expect(out[0]).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
      expect(out[1]).toEqual([
        'np',
        'NodePort',
        '10.96.0.20',
        '<none>',
        '80:30080/TCP',
        expect.stringMatching(/^\d+s$/),
        'app=np',
      ]);
      expect(out[2]).toEqual([
        'ext',
        'ExternalName',
        '<none>',
        'db.example.com',
        '<none>',
        expect.stringMatching(/^\d+s$/),
        '<none>',
      ]);
    });

    test('namespaces, leases, endpointslices, events, roles and bindings', async () => {
      const s = h.server.store;
      expect(rows(await kubectl('get', 'ns', 'default'))).toEqual([
        ['NAME', 'STATUS', 'AGE'],
        ['default', 'Active', expect.stringMatching(/^\d+s$/)],
      ]);
      s.create('leases', {
        metadata: { name: 'node-a', namespace: 'kube-node-lease' },
        spec: { holderIdentity: 'node-a' },
      });
      expect(rows(await kubectl('get', 'leases', '-n', 'kube-node-lease'))).toEqual([
        ['NAME', 'HOLDER', 'AGE'],
        ['node-a', 'node-a', expect.stringMatching(/^\d+s$/)],
      ]);
      s.create('endpointslices', {
        metadata: { name: 'web-abc', namespace: 'default' },
        addressType: 'IPv4',
        ports: [{ port: 8080, name: 'http', protocol: 'TCP' }],
        endpoints: ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'].map((a) => ({
          addresses: [a],
        })),
      });
      expect(rows(await kubectl('get', 'endpointslices', 'web-abc'))).toEqual([
        ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE'],
        [
          'web-abc',
          'IPv4',
          '8080',
          '10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...',
          expect.stringMatching(/^\d+s$/),
        ],
      ]);
      s.create('events', {
        metadata: { name: 'crash.1', namespace: 'default' },
        involvedObject: {
          kind: 'Pod',
          name: 'crash',
          namespace: 'default',
          fieldPath: 'spec.containers{app}',
        },
        reason: 'BackOff',
        type: 'Warning',
        message: 'Back-off restarting failed container app',
        source: { component: 'kubelet', host: 'node-a' },
        firstTimestamp: new Date(Date.now() - 120_000).toISOString().replace(/\.\d+Z$/, 'Z'),
        lastTimestamp: new Date(Date.now() - 30_000).toISOString().replace(/\.\d+Z$/, 'Z'),
        count: 7,
      });
      const ev = rows(await kubectl('get', 'events', '-o', 'wide'));
      expect(ev[0]).toEqual([
        'LAST SEEN',
        'TYPE',
        'REASON',
        'OBJECT',
        'SUBOBJECT',
        'SOURCE',
        'MESSAGE',
        'FIRST SEEN',
        'COUNT',
        'NAME',
      ]);
      expect(ev[1]).toEqual([
        expect.stringMatching(/^3\ds$/),
        'Warning',
        'BackOff',
        'pod/crash',
        'spec.containers{app}',
        'kubelet, node-a',
        'Back-off restarting failed container app',
        expect.stringMatching(/^2m\ds?$|^2m$|^1\d\ds$/),
        '7',
        'crash.1',
      ]);
      await kubectl('create', 'role', 'reader', '--verb=get', '--resource=pods');
      const roles = rows(await kubectl('get', 'roles'));
      expect(roles[0]).toEqual(['NAME', 'CREATED AT']);
      expect(roles[1]?.[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      await kubectl(
        'create',
        'rolebinding',
        'rb',
        '--role=reader',
        '--user=alice',
        '--group=devs',
        '--serviceaccount=default:builder',
      );
      expect(rows(await kubectl('get', 'rolebindings', '-o', 'wide'))).toEqual([
        ['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS'],
        ['rb', 'Role/reader', expect.stringMatching(/^\d+s$/), 'alice', 'devs', 'default:builder'],
      ]);
    });

    test('get pods -w: watch events arrive as Table rows with the same columns', async () => {
      const child = spawn('kubectl', ['get', 'pods', '-w', `--cache-dir=${join(h.dir, 'cache')}`], {
        env: h.env,
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      try {
        for (let i = 0; i < 200 && !out.includes('crash'); i++) await new Promise((r) => setTimeout(r, 50));
        h.server.store.create('pods', {
          metadata: { name: 'late', namespace: 'default' },
          spec: {
            containers: [
              { name: 'a', image: 'x' },
              { name: 'b', image: 'y' },
            ],
          },
          status: { phase: 'Pending' },
        });
        for (let i = 0; i < 200 && !out.includes('late'); i++) await new Promise((r) => setTimeout(r, 50));
        const lines = rows(out);
        expect(lines[0]).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
        expect(lines.find((l) => l[0] === 'late')?.slice(0, 4)).toEqual(['late', '0/2', 'Pending', '0']);
        // One header only: the watch Tables carry the list's columns.
        expect(lines.filter((l) => l[0] === 'NAME')).toHaveLength(1);
      } finally {
        child.kill();
      }
    });
  },
);
