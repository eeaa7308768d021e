import { describe, expect, it } from 'vitest';
import { InvalidServiceError, parseService } from '../src/index.js';
import { service } from './fixtures.js';

describe('parseService', () => {
  it('builds one service port per port with kube-proxy names', () => {
    const parsed = parseService(
      service('ns1', 'svc1', {
        clusterIP: '172.30.0.41',
        ports: [
          { name: 'p80', port: 80, protocol: 'TCP', targetPort: 8080 },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
      }),
    );
    expect(parsed.key).toBe('ns1/svc1');
    expect([...parsed.v4.keys()]).toEqual(['ns1/svc1:dns', 'ns1/svc1:p80']);
    expect(parsed.v6.size).toBe(0);
    const p80 = parsed.v4.get('ns1/svc1:p80')!;
    expect(p80).toMatchObject({
      name: { namespace: 'ns1', name: 'svc1', port: 'p80', protocol: 'TCP' },
      serviceKey: 'ns1/svc1',
      ipFamily: 4,
      type: 'ClusterIP',
      clusterIP: '172.30.0.41',
      port: 80,
      nodePort: 0,
      targetPort: 8080,
      sessionAffinityClientIP: false,
      stickyMaxAgeSeconds: 0,
      externallyAccessible: false,
      usesClusterEndpoints: true,
      usesLocalEndpoints: false,
    });
    expect(parsed.v4.get('ns1/svc1:dns')!.targetPort).toBe(53);
  });

  it('defaults protocol TCP, unnamed port, namespace default and affinity timeout 10800', () => {
    const parsed = parseService({
      metadata: { name: 'svc' },
      spec: { clusterIP: '10.0.0.1', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] },
    });
    const info = parsed.v4.get('default/svc')!;
    expect(info.protocol).toBe('TCP');
    expect(info.sessionAffinityClientIP).toBe(true);
    expect(info.stickyMaxAgeSeconds).toBe(10800);
  });

  it('splits a dual-stack service per family and normalises every address', () => {
    const parsed = parseService(
      service(
        'ns',
        'dual',
        {
          type: 'LoadBalancer',
          clusterIPs: ['172.30.0.041', 'FD00::0041'],
          ipFamilies: ['IPv4', 'IPv6'],
          externalIPs: ['192.168.99.011', '2001:DB8::11'],
          loadBalancerSourceRanges: [' 203.0.113.000/025 ', '2001:db8:1::5/48'],
          ports: [{ name: 'p80', port: 80, nodePort: 30080 }],
        },
        {
          loadBalancer: {
            ingress: [
              { ip: '1.2.3.4' },
              { ip: '1.2.3.5', ipMode: 'VIP' },
              { ip: '1.2.3.6', ipMode: 'Proxy' },
              { hostname: 'lb.example.com' },
              { ip: '2001:db8::99' },
            ],
          },
        },
      ),
    );
    expect(parsed.v4.get('ns/dual:p80')).toMatchObject({
      clusterIP: '172.30.0.41',
      externalIPs: ['192.168.99.11'],
      loadBalancerVIPs: ['1.2.3.4', '1.2.3.5'],
      loadBalancerSourceRanges: ['203.0.113.0/25'],
      nodePort: 30080,
      externallyAccessible: true,
    });
    expect(parsed.v6.get('ns/dual:p80')).toMatchObject({
      ipFamily: 6,
      clusterIP: 'fd00::41',
      externalIPs: ['2001:db8::11'],
      loadBalancerVIPs: ['2001:db8::99'],
      loadBalancerSourceRanges: ['2001:db8:1::/48'],
    });
  });

  it('applies traffic policies as kube-proxy does', () => {
    const lbLocal = parseService(
      service('ns', 'lb', {
        type: 'LoadBalancer',
        clusterIP: '10.0.0.1',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 30000,
        ports: [{ port: 80, nodePort: 30001 }],
      }),
    ).v4.get('ns/lb')!;
    expect(lbLocal).toMatchObject({
      externalPolicyLocal: true,
      internalPolicyLocal: false,
      healthCheckNodePort: 30000,
      usesClusterEndpoints: true,
      usesLocalEndpoints: true,
    });
    // externalTrafficPolicy: Local means nothing on a plain ClusterIP service.
    const cipLocal = parseService(
      service('ns', 'cip', { clusterIP: '10.0.0.2', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] }),
    ).v4.get('ns/cip')!;
    expect(cipLocal).toMatchObject({
      externalPolicyLocal: false,
      usesLocalEndpoints: false,
      healthCheckNodePort: 0,
    });
    // NodePort + eTP Local: Local policy but no health check node port (only LoadBalancers get one).
    const npLocal = parseService(
      service('ns', 'np', {
        type: 'NodePort',
        clusterIP: '10.0.0.3',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 30000,
        ports: [{ port: 80, nodePort: 30002 }],
      }),
    ).v4.get('ns/np')!;
    expect(npLocal).toMatchObject({
      externalPolicyLocal: true,
      usesLocalEndpoints: true,
      healthCheckNodePort: 0,
    });
    const itpLocal = parseService(
      service('ns', 'itp', { clusterIP: '10.0.0.4', internalTrafficPolicy: 'Local', ports: [{ port: 80 }] }),
    ).v4.get('ns/itp')!;
    expect(itpLocal).toMatchObject({
      internalPolicyLocal: true,
      usesClusterEndpoints: false,
      usesLocalEndpoints: true,
    });
    const itpLocalExternal = parseService(
      service('ns', 'itpx', {
        clusterIP: '10.0.0.5',
        internalTrafficPolicy: 'Local',
        externalIPs: ['192.168.1.1'],
        ports: [{ port: 80 }],
      }),
    ).v4.get('ns/itpx')!;
    expect(itpLocalExternal).toMatchObject({ usesClusterEndpoints: true, usesLocalEndpoints: true });
  });

  it('keeps trafficDistribution for information', () => {
    const info = parseService(
      service('ns', 's', {
        clusterIP: '10.0.0.1',
        trafficDistribution: 'PreferSameNode',
        ports: [{ port: 80 }],
      }),
    ).v4.get('ns/s')!;
    expect(info.trafficDistribution).toBe('PreferSameNode');
  });

  it.each([
    ['headless', { clusterIP: 'None', ports: [{ port: 80 }] }],
    ['headless dual-stack', { clusterIPs: ['None'], ports: [{ port: 80 }] }],
    ['ExternalName', { type: 'ExternalName', externalName: 'example.com', ports: [{ port: 80 }] }],
    ['no cluster IP yet', { ports: [{ port: 80 }] }],
  ])('ignores %s services', (_name, spec) => {
    const parsed = parseService(service('ns', 's', spec));
    expect(parsed.v4.size + parsed.v6.size).toBe(0);
  });

  it.each([
    [
      'an invalid cluster IP',
      { clusterIP: '10.0.0.300', ports: [{ port: 80 }] },
      'spec.clusterIPs "10.0.0.300"',
    ],
    [
      'a port out of range',
      { clusterIP: '10.0.0.1', ports: [{ port: 65536 }] },
      'spec.ports[0].port 65536 is not in 1-65535',
    ],
    ['port 0', { clusterIP: '10.0.0.1', ports: [{ port: 0 }] }, 'spec.ports[0].port 0'],
    [
      'an unknown protocol',
      { clusterIP: '10.0.0.1', ports: [{ port: 80, protocol: 'ICMP' }] },
      'protocol "ICMP" is not TCP, UDP or SCTP',
    ],
    [
      'a node port out of range',
      { clusterIP: '10.0.0.1', ports: [{ port: 80, nodePort: 70000 }] },
      'nodePort 70000',
    ],
    [
      'an invalid external IP',
      { clusterIP: '10.0.0.1', externalIPs: ['nope'], ports: [{ port: 80 }] },
      'spec.externalIPs "nope"',
    ],
    [
      'an invalid source range',
      { clusterIP: '10.0.0.1', loadBalancerSourceRanges: ['10.0.0.0/40'], ports: [{ port: 80 }] },
      'loadBalancerSourceRanges "10.0.0.0/40"',
    ],
    [
      'duplicate port names',
      {
        clusterIP: '10.0.0.1',
        ports: [
          { name: 'a', port: 80 },
          { name: 'a', port: 81 },
        ],
      },
      'spec.ports[1].name "a" is used by another port',
    ],
    [
      'an unknown traffic policy',
      { clusterIP: '10.0.0.1', externalTrafficPolicy: 'Nearby', ports: [{ port: 80 }] },
      'externalTrafficPolicy',
    ],
    [
      'an affinity timeout out of range',
      {
        clusterIP: '10.0.0.1',
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } },
        ports: [{ port: 80 }],
      },
      'timeoutSeconds 0',
    ],
    ['an unknown type', { type: 'Magic', clusterIP: '10.0.0.1', ports: [{ port: 80 }] }, 'spec.type "Magic"'],
  ])('rejects a service with %s', (_name, spec, message) => {
    let caught: unknown;
    try {
      parseService(service('ns', 'bad', spec as never));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidServiceError);
    const err = caught as InvalidServiceError;
    expect(err.namespace).toBe('ns');
    expect(err.serviceName).toBe('bad');
    expect(err.message).toContain('Service ns/bad skipped');
    expect(err.problems.join('\n')).toContain(message);
  });

  it('rejects an invalid load-balancer ingress IP', () => {
    expect(() =>
      parseService(
        service(
          'ns',
          'lb',
          { type: 'LoadBalancer', clusterIP: '10.0.0.1', ports: [{ port: 80 }] },
          { loadBalancer: { ingress: [{ ip: '1.2.3' }] } },
        ),
      ),
    ).toThrow(/ingress ip "1.2.3"/);
  });
});
