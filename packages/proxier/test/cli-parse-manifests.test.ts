import { buildProxySnapshots } from '@nodeagent/proxy-state';
import { describe, expect, it } from 'vitest';
import { ManifestError, parseManifests } from '../src/cli/parse-manifests.js';

const yamlText = `
apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: svc1 }
spec:
  clusterIP: 172.30.0.41
  ports: [{ name: p80, port: 80, protocol: TCP }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  namespace: ns1
  name: svc1-abc
  labels: { kubernetes.io/service-name: svc1 }
addressType: IPv4
ports: [{ name: p80, port: 80, protocol: TCP }]
endpoints:
  - addresses: [10.180.0.1]
    nodeName: node-a
---
# an empty document
---
apiVersion: v1
kind: ConfigMap
metadata: { name: cm }
---
apiVersion: v1
kind: Node
metadata: { name: node-a, labels: { topology.kubernetes.io/zone: z1 } }
`;

describe('parseManifests', () => {
  it('reads multi-document YAML, skipping other kinds and empty documents', () => {
    const parsed = parseManifests(yamlText);
    expect(parsed.services.map((s) => s.metadata?.name)).toEqual(['svc1']);
    expect(parsed.endpointSlices.map((s) => s.metadata?.name)).toEqual(['svc1-abc']);
    expect(parsed.nodes.map((n) => n.metadata?.name)).toEqual(['node-a']);
    expect(parsed.ignored).toEqual(['ConfigMap/cm']);
    expect(parsed.errors).toEqual([]);
    const { v4, errors } = buildProxySnapshots({
      nodeName: 'node-a',
      nodeIPs: ['192.168.0.2'],
      services: parsed.services,
      endpointSlices: parsed.endpointSlices,
      node: parsed.nodes[0]!,
    });
    expect(errors).toEqual([]);
    expect(v4.node.zone).toBe('z1');
    expect(v4.categorize('ns1/svc1:p80').clusterEndpoints.map((e) => [e.endpoint, e.isLocal])).toEqual([
      ['10.180.0.1:80', true],
    ]);
  });

  it('reads JSON lists, typed lists and top-level arrays', () => {
    const json = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { kind: 'Service', metadata: { name: 'a' }, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }] } },
        {
          kind: 'EndpointSliceList',
          items: [{ metadata: { name: 'a-1' }, addressType: 'IPv4', endpoints: [] }],
        },
      ],
    });
    const parsed = parseManifests(json);
    expect(parsed.services.map((s) => s.metadata?.name)).toEqual(['a']);
    expect(parsed.endpointSlices.map((s) => [s.kind, s.metadata?.name])).toEqual([['EndpointSlice', 'a-1']]);
    expect(
      parseManifests(JSON.stringify([{ kind: 'Service', metadata: { name: 'x' } }])).services.length,
    ).toBe(1);
  });

  it('reports a broken document and keeps the others', () => {
    const parsed = parseManifests(
      'kind: Service\nmetadata: { name: ok }\n---\nkind: Service\nmetadata: { name: [unclosed\n---\n- 1\n- 2\n',
    );
    expect(parsed.services.map((s) => s.metadata?.name)).toEqual(['ok']);
    expect(parsed.errors.length).toBe(3);
    expect(parsed.errors[0]).toBeInstanceOf(ManifestError);
    expect(parsed.errors[0]!.documentIndex).toBe(1);
    expect(parsed.errors[1]!.message).toMatch(/document 2: not a Kubernetes object/);
  });

  it('lists invalid objects as errors when building snapshots', () => {
    const parsed = parseManifests(`
kind: Service
metadata: { namespace: ns, name: bad }
spec: { clusterIP: 10.0.0.1, ports: [{ port: 80, protocol: ICMP }] }
---
kind: Service
metadata: { namespace: ns, name: good }
spec: { clusterIP: 10.0.0.2, ports: [{ port: 80 }] }
`);
    const built = buildProxySnapshots({ nodeName: 'n', services: parsed.services, endpointSlices: [] });
    expect(built.errors.map((e) => e.message)).toEqual([
      'Service ns/bad skipped: spec.ports[0].protocol "ICMP" is not TCP, UDP or SCTP',
    ]);
    expect([...built.v4.services.keys()]).toEqual(['ns/good']);
  });
});
