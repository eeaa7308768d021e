// biome-ignore-all lint/suspicious/noExplicitAny: assertions read raw API JSON
// API defaulting and allocation as kube-apiserver: expectations from upstream's
// pkg/apis/core/v1/defaults.go, plugin/pkg/admission/defaulttolerationseconds, and
// pkg/registry/core/service (ipallocator / portallocator messages).
import { afterEach, describe, expect, test } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { call, start } from './helpers.js';

const PODS = '/api/v1/namespaces/default/pods';
const SVCS = '/api/v1/namespaces/default/services';

let server: MiniApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

function svc(name: string, spec: Record<string, unknown>): unknown {
  return { metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } };
}

describe('pod defaults', () => {
  test('a bare pod gets the defaults kube-apiserver writes', async () => {
    server = await start({ serviceAccountAdmission: false });
    const res = await call(server, 'POST', PODS, {
      metadata: { name: 'p' },
      spec: {
        containers: [
          {
            name: 'a',
            image: 'busybox',
            ports: [{ containerPort: 80 }],
            livenessProbe: { httpGet: { port: 80 } },
            env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          },
          { name: 'b', image: 'nginx:1.27' },
          { name: 'c', image: 'x:latest' },
          { name: 'd', image: 'reg:5000/x@sha256:0123' },
        ],
        volumes: [{ name: 'v', configMap: { name: 'cm' } }],
      },
    });
    expect(res.code).toBe(201);
    const spec = res.body.spec;
    expect(spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      securityContext: {},
      enableServiceLinks: true,
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      volumes: [{ name: 'v', configMap: { name: 'cm', defaultMode: 420 } }],
    });
    expect(spec.containers[0]).toEqual({
      name: 'a',
      image: 'busybox',
      imagePullPolicy: 'Always',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      livenessProbe: {
        httpGet: { port: 80, path: '/', scheme: 'HTTP' },
        timeoutSeconds: 1,
        periodSeconds: 10,
        successThreshold: 1,
        failureThreshold: 3,
      },
      env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }],
      resources: {},
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });
    expect(spec.containers.map((c: any) => c.imagePullPolicy)).toEqual([
      'Always',
      'IfNotPresent',
      'Always',
      'IfNotPresent',
    ]);
  });

  test('set values are kept; a toleration already covering not-ready is not duplicated', async () => {
    server = await start();
    const res = await call(server, 'POST', PODS, {
      metadata: { name: 'p' },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        tolerations: [{ operator: 'Exists' }],
        containers: [{ name: 'a', image: 'busybox', imagePullPolicy: 'Never' }],
      },
    });
    expect(res.body.spec).toMatchObject({
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      tolerations: [{ operator: 'Exists' }],
    });
    expect(res.body.spec.containers[0].imagePullPolicy).toBe('Never');
  });

  test('invalid enumerated values are 422 with upstream causes', async () => {
    server = await start();
    const res = await call(server, 'POST', PODS, {
      metadata: { name: 'p' },
      spec: {
        dnsPolicy: 'Bogus',
        containers: [
          {
            name: 'a',
            image: 'busybox',
            imagePullPolicy: 'Sometimes',
            ports: [{ containerPort: 1, protocol: 'ICMP' }],
          },
        ],
      },
    });
    expect(res.code).toBe(422);
    expect(res.body.details.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        message:
          'Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
        field: 'spec.dnsPolicy',
      },
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
        field: 'spec.containers[0].imagePullPolicy',
      },
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        field: 'spec.containers[0].ports[0].protocol',
      },
    ]);
  });

  test('apiDefaulting: false leaves objects as sent', async () => {
    server = await start({ apiDefaulting: false, serviceAccountAdmission: false });
    const res = await call(server, 'POST', PODS, {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'a', image: 'i' }] },
    });
    expect(res.body.spec).toEqual({ containers: [{ name: 'a', image: 'i' }] });
    expect((await call(server, 'GET', '/apis/networking.k8s.io/v1/servicecidrs')).body.items).toEqual([]);
  });
});

describe('service defaults and allocation', () => {
  test('ClusterIP defaults and an IP from the default ServiceCIDR', async () => {
    server = await start();
    const cidrs = await call(server, 'GET', '/apis/networking.k8s.io/v1/servicecidrs');
    expect(cidrs.body.items).toHaveLength(1);
    expect(cidrs.body.items[0]).toMatchObject({
      kind: 'ServiceCIDR',
      metadata: { name: 'kubernetes' },
      spec: { cidrs: ['10.0.0.0/24'] },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const res = await call(server, 'POST', SVCS, svc('a', {}));
    expect(res.code).toBe(201);
    const spec = res.body.spec;
    expect(spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    });
    expect(spec.externalTrafficPolicy).toBeUndefined();
    expect(spec.clusterIP).toMatch(/^10\.0\.0\.([1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-4])$/);
    expect(spec.clusterIPs).toEqual([spec.clusterIP]);
    expect(res.body.status).toEqual({ loadBalancer: {} });
  });

  test('a requested clusterIP: taken, out of range, invalid; freed on delete', async () => {
    server = await start({ serviceClusterIpRange: '10.96.0.0/28' });
    expect(
      (await call(server, 'POST', SVCS, svc('a', { clusterIP: '10.96.0.10' }))).body.spec.clusterIPs,
    ).toEqual(['10.96.0.10']);
    const taken = await call(server, 'POST', SVCS, svc('b', { clusterIP: '10.96.0.10' }));
    expect(taken.code).toBe(422);
    expect(taken.body.message).toBe(
      'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    );
    expect(taken.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated',
        field: 'spec.clusterIPs',
      },
    ]);
    const outside = await call(server, 'POST', SVCS, svc('c', { clusterIP: '10.0.0.1' }));
    expect(outside.body.message).toBe(
      'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.1"}: failed to allocate IP 10.0.0.1: the provided IP (10.0.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/28',
    );
    expect((await call(server, 'DELETE', `${SVCS}/a`)).code).toBe(200);
    expect((await call(server, 'POST', SVCS, svc('b', { clusterIP: '10.96.0.10' }))).code).toBe(201);
    // A /28 has 14 usable addresses: 13 more fit, the next is refused.
    for (let i = 0; i < 13; i++) expect((await call(server, 'POST', SVCS, svc(`s${i}`, {}))).code).toBe(201);
    const full = await call(server, 'POST', SVCS, svc('full', {}));
    expect(full.code).toBe(422);
  });

  test('headless services keep clusterIP None', async () => {
    server = await start();
    const res = await call(server, 'POST', SVCS, svc('h', { clusterIP: 'None' }));
    expect(res.body.spec).toMatchObject({
      clusterIP: 'None',
      clusterIPs: ['None'],
      ipFamilyPolicy: 'SingleStack',
    });
  });

  test('update keeps the allocated clusterIP and nodePorts; a changed clusterIP is refused', async () => {
    server = await start();
    const created = (await call(server, 'POST', SVCS, svc('a', { type: 'NodePort' }))).body;
    const put = await call(server, 'PUT', `${SVCS}/a`, {
      metadata: { name: 'a' },
      spec: { type: 'NodePort', selector: { app: 'b' }, ports: [{ port: 80 }] },
    });
    expect(put.code).toBe(200);
    expect(put.body.spec.clusterIP).toBe(created.spec.clusterIP);
    expect(put.body.spec.ports[0].nodePort).toBe(created.spec.ports[0].nodePort);
    const other = created.spec.clusterIP === '10.0.0.200' ? '10.0.0.201' : '10.0.0.200';
    const changed = await call(server, 'PUT', `${SVCS}/a`, {
      metadata: { name: 'a' },
      spec: { clusterIP: other, ports: [{ port: 80 }] },
    });
    expect(changed.code).toBe(422);
    expect(changed.body.details.causes[0]).toEqual({
      reason: 'FieldValueInvalid',
      message: `Invalid value: []string{"${other}"}: may not change once set`,
      field: 'spec.clusterIPs[0]',
    });
  });

  test('NodePort and LoadBalancer: nodePorts from 30000-32767, taken and out-of-range refused', async () => {
    server = await start();
    const np = await call(
      server,
      'POST',
      SVCS,
      svc('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
    );
    expect(np.code).toBe(201);
    expect(np.body.spec).toMatchObject({ externalTrafficPolicy: 'Cluster', ports: [{ nodePort: 30080 }] });
    const lb = await call(
      server,
      'POST',
      SVCS,
      svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }),
    );
    expect(lb.body.spec.allocateLoadBalancerNodePorts).toBe(true);
    const port = lb.body.spec.ports[0].nodePort;
    expect(port).toBeGreaterThanOrEqual(30000);
    expect(port).toBeLessThanOrEqual(32767);
    expect(lb.body.spec.healthCheckNodePort).toBeGreaterThanOrEqual(30000);
    expect(lb.body.spec.healthCheckNodePort).not.toBe(port);
    const taken = await call(
      server,
      'POST',
      SVCS,
      svc('t', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
    );
    expect(taken.body.message).toBe(
      'Service "t" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
    );
    const range = await call(
      server,
      'POST',
      SVCS,
      svc('r', { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] }),
    );
    expect(range.body.message).toBe(
      'Service "r" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
    );
    const forbidden = await call(server, 'POST', SVCS, svc('f', { ports: [{ port: 80, nodePort: 30081 }] }));
    expect(forbidden.body.details.causes[0]).toEqual({
      reason: 'FieldValueForbidden',
      message: "Forbidden: may not be used when `type` is 'ClusterIP'",
      field: 'spec.ports[0].nodePort',
    });
    await call(server, 'DELETE', `${SVCS}/np`);
    expect(
      (
        await call(
          server,
          'POST',
          SVCS,
          svc('t', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
        )
      ).code,
    ).toBe(201);
  });

  test('invalid enumerated service values are 422', async () => {
    server = await start();
    const res = await call(server, 'POST', SVCS, svc('x', { type: 'Cluster', sessionAffinity: 'Sticky' }));
    expect(res.code).toBe(422);
    expect(res.body.details.causes).toEqual(
      expect.arrayContaining([
        {
          reason: 'FieldValueNotSupported',
          message:
            'Unsupported value: "Cluster": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
          field: 'spec.type',
        },
        {
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "Sticky": supported values: "ClientIP", "None"',
          field: 'spec.sessionAffinity',
        },
      ]),
    );
  });

  test('the store API (a test back door, like writing to etcd) leaves objects as given', async () => {
    server = await start();
    const stored = server.store.create('services', {
      metadata: { name: 'seed', namespace: 'default' },
      spec: { clusterIP: '172.30.0.10', ports: [{ port: 80 }] },
    });
    expect(stored.spec).toEqual({ clusterIP: '172.30.0.10', ports: [{ port: 80 }] });
  });

  test('a bad --service-cluster-ip-range is refused at start', async () => {
    await expect(start({ serviceClusterIpRange: '10.0.0.0' })).rejects.toThrow(/10\.0\.0\.0/);
  });
});
