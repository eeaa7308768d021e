// Upstream pkg/kubelet/server/auth.go GetRequestAttributes (and auth_test.go): nodes/<sub>
// of this node, verb from the HTTP method, fine-grained subresources first then proxy.
import { describe, expect, it } from 'vitest';
import { apiVerbOf, isSubpath, requestAttributes } from '../src/index.js';

const user = { name: 'u', groups: ['system:authenticated'] };
const subs = (method: string, path: string, fine = true) =>
  requestAttributes('node1', user, method, path, fine).map((a) => `${a.verb} nodes/${a.subresource}`);

describe('the kubelet request attributes', () => {
  it('maps HTTP methods to API verbs as upstream', () => {
    expect(['POST', 'GET', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map(apiVerbOf)).toEqual([
      'create',
      'get',
      'update',
      'patch',
      'delete',
      '',
    ]);
  });

  it('maps each path to its subresource', () => {
    expect(subs('GET', '/stats/summary')).toEqual(['get nodes/stats']);
    expect(subs('GET', '/stats')).toEqual(['get nodes/stats']);
    expect(subs('GET', '/metrics')).toEqual(['get nodes/metrics']);
    expect(subs('GET', '/metrics/cadvisor')).toEqual(['get nodes/metrics']);
    expect(subs('GET', '/logs/syslog')).toEqual(['get nodes/log']);
    expect(subs('POST', '/checkpoint/ns/pod/c')).toEqual(['create nodes/checkpoint']);
    expect(subs('GET', '/containerLogs/ns/pod/c')).toEqual(['get nodes/proxy']);
    expect(subs('POST', '/exec/ns/pod/c')).toEqual(['create nodes/proxy']);
    expect(subs('GET', '/exec/ns/pod/c')).toEqual(['get nodes/proxy']);
    expect(subs('POST', '/portForward/ns/pod')).toEqual(['create nodes/proxy']);
  });

  it('checks pods/healthz/configz first with fine-grained authorization, then proxy', () => {
    expect(subs('GET', '/pods')).toEqual(['get nodes/pods', 'get nodes/proxy']);
    expect(subs('GET', '/runningpods/')).toEqual(['get nodes/pods', 'get nodes/proxy']);
    expect(subs('GET', '/healthz')).toEqual(['get nodes/healthz', 'get nodes/proxy']);
    expect(subs('GET', '/healthz/ping')).toEqual(['get nodes/healthz', 'get nodes/proxy']);
    expect(subs('GET', '/configz')).toEqual(['get nodes/configz', 'get nodes/proxy']);
    expect(subs('GET', '/pods', false)).toEqual(['get nodes/proxy']);
  });

  it('does not treat a longer sibling path as a subpath', () => {
    expect(isSubpath('/statsfoo', '/stats')).toBe(false);
    expect(isSubpath('/stats/', '/stats')).toBe(true);
    expect(subs('GET', '/metricsx')).toEqual(['get nodes/proxy']);
  });

  it('names this node and the core v1 nodes resource', () => {
    const [a] = requestAttributes('node1', user, 'GET', '/stats/summary', true);
    expect(a).toMatchObject({
      name: 'node1',
      resource: 'nodes',
      apiVersion: 'v1',
      path: '/stats/summary',
      user,
    });
  });
});
