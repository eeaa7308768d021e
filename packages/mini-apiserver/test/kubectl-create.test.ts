// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
import { afterAll, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { start } from './helpers.js';
import { kubectlMissing, useKubectlServer } from './kubectl-harness.js';

if (kubectlMissing && process.env.CI !== 'true') {
  console.warn('\n*** kubectl not found: skipping the kubectl create tests ***\n');
}

/**
 * `kubectl create <kind>` sends protobuf for these; the object stored must be the one kubectl
 * builds, which `--dry-run=client -o json` prints (the same object, as JSON).
 */
const CASES: Array<{ args: string[]; resource: string; ns?: string; name: string }> = [
  { args: ['namespace', 'team-a'], resource: 'namespaces', name: 'team-a' },
  {
    args: ['service', 'clusterip', 'web', '--tcp=80:8080', '--tcp=443'],
    resource: 'services',
    ns: 'default',
    name: 'web',
  },
  {
    args: ['service', 'clusterip', 'headless', '--clusterip=None'],
    resource: 'services',
    ns: 'default',
    name: 'headless',
  },
  {
    args: ['service', 'nodeport', 'np', '--tcp=80:http', '--node-port=30080'],
    resource: 'services',
    ns: 'default',
    name: 'np',
  },
  {
    args: ['service', 'loadbalancer', 'lb', '--tcp=5678:8080'],
    resource: 'services',
    ns: 'default',
    name: 'lb',
  },
  {
    args: ['service', 'externalname', 'ext', '--external-name=db.example.com'],
    resource: 'services',
    ns: 'default',
    name: 'ext',
  },
  {
    args: [
      'role',
      'reader',
      '--verb=get,list',
      '--resource=pods,leases.coordination.k8s.io',
      '--resource-name=a',
    ],
    resource: 'roles',
    ns: 'default',
    name: 'reader',
  },
  {
    args: ['clusterrole', 'nodes-reader', '--verb=get', '--resource=nodes', '--non-resource-url=/healthz'],
    resource: 'clusterroles',
    name: 'nodes-reader',
  },
  {
    args: ['clusterrole', 'agg', '--aggregation-rule=rbac.example.com/aggregate-to-agg=true'],
    resource: 'clusterroles',
    name: 'agg',
  },
  {
    args: [
      'rolebinding',
      'rb',
      '--role=reader',
      '--user=alice',
      '--group=devs',
      '--serviceaccount=default:builder',
    ],
    resource: 'rolebindings',
    ns: 'default',
    name: 'rb',
  },
  {
    args: ['clusterrolebinding', 'crb', '--clusterrole=nodes-reader', '--group=ops'],
    resource: 'clusterrolebindings',
    name: 'crb',
  },
  {
    args: ['configmap', 'cfg', '--from-literal=a=1', '--from-literal=b=2'],
    resource: 'configmaps',
    ns: 'default',
    name: 'cfg',
  },
  {
    args: ['secret', 'generic', 'pw', '--from-literal=password=s3cr3t'],
    resource: 'secrets',
    ns: 'default',
    name: 'pw',
  },
  { args: ['serviceaccount', 'builder'], resource: 'serviceaccounts', ns: 'default', name: 'builder' },
];

describe.skipIf(kubectlMissing && process.env.CI !== 'true')(
  'kubectl create <kind> (protobuf bodies)',
  () => {
    const h = useKubectlServer('mini-apiserver-kubectl-create-');
    const kubectl = h.kubectl;

    /** The parts of an object a client sets (what the server must have decoded). */
    function clientPart(obj: any): any {
      const { kind, apiVersion, metadata, status: _status, ...rest } = obj;
      const meta: any = { name: metadata.name };
      if (metadata.labels) meta.labels = metadata.labels;
      if (metadata.annotations) meta.annotations = metadata.annotations;
      return { kind, apiVersion, metadata: meta, ...rest };
    }

    test.each(CASES)(
      'kubectl create $args.0 $args.1 stores what kubectl sent',
      async ({ args, resource, ns, name }) => {
        const expected = JSON.parse(await kubectl('create', ...args, '--dry-run=client', '-o', 'json'));
        const out = await kubectl('create', ...args);
        expect(out).toMatch(/ created\n$/);
        const stored = h.server.store.get(resource as any, ns, name) as any;
        const got = clientPart(stored);
        const want = clientPart(expected);
        // kube-apiserver's namespace strategy adds the `kubernetes` finalizer on create.
        if (resource === 'namespaces') want.spec = { finalizers: ['kubernetes'] };
        // The server fills in what kube-apiserver defaults on create (namespace finalizers; a
        // ServiceAccount's and Secret's server-side fields): compare what kubectl set.
        // A Service's spec also gets kube-apiserver's defaults and allocations (clusterIP,
        // ipFamilies, sessionAffinity, nodePorts, ...): what kubectl sent must be kept.
        for (const [k, v] of Object.entries(want)) {
          if (resource === 'services' && k === 'spec')
            expect(got[k], `${resource}/${name} .${k}`).toMatchObject(v as object);
          else expect(got[k], `${resource}/${name} .${k}`).toEqual(v);
        }
      },
    );

    test('a protobuf body of a kind the server does not decode is a 400 naming the failure', async () => {
      const body = Buffer.concat([
        Buffer.from([0x6b, 0x38, 0x73, 0x00]),
        // runtime.Unknown{typeMeta{apiVersion "v1", kind "Widget"}}
        Buffer.from([0x0a, 0x0c, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x06, ...Buffer.from('Widget')]),
      ]);
      const res = await fetch(`${h.server.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
        body,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).reason).toBe('BadRequest');
    });
  },
);

/** Minimal protobuf writer for hand-built bodies. */
function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}
function msg(field: number, body: Buffer | string): Buffer {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.from([...varint((field << 3) | 2), ...varint(b.length), ...b]);
}
function num(field: number, n: number): Buffer {
  return Buffer.from([...varint(field << 3), ...varint(n)]);
}

describe('protobuf Lease (client-go leader election)', () => {
  let server: MiniApiServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  test('holderIdentity, leaseDurationSeconds and MicroTime renewTime decode', async () => {
    server = await start();
    const lease = Buffer.concat([
      msg(1, Buffer.concat([msg(1, 'node-a'), msg(3, 'kube-node-lease')])),
      msg(
        2,
        Buffer.concat([
          msg(1, 'node-a'),
          num(2, 40),
          msg(4, Buffer.concat([num(1, 1767268800), num(2, 123456000)])),
          num(5, 3),
        ]),
      ),
    ]);
    const body = Buffer.concat([
      Buffer.from([0x6b, 0x38, 0x73, 0x00]),
      msg(1, Buffer.concat([msg(1, 'coordination.k8s.io/v1'), msg(2, 'Lease')])),
      msg(2, lease),
    ]);
    const res = await fetch(`${server.url}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
      body,
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as any;
    expect(created.metadata.name).toBe('node-a');
    expect(created.spec).toEqual({
      holderIdentity: 'node-a',
      leaseDurationSeconds: 40,
      renewTime: '2026-01-01T12:00:00.123456Z',
      leaseTransitions: 3,
    });
  });
});
