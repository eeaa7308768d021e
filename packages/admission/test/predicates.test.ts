// One table per predicate, with the reasons and messages of upstream's predicate admit handler.
import type { V1NodeSelector, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { PredicateAdmitHandler } from '../src/index.js';
import { node, pod } from './helpers.js';

const affinityFailure = {
  admit: false,
  reason: 'NodeAffinity',
  message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
};
const labels = { 'kubernetes.io/hostname': 'node-1', zone: 'a', gen: '5' };
const admitOn = (p: V1Pod, n = node({ labels }), others: V1Pod[] = []) =>
  new PredicateAdmitHandler({ node: () => n }).admit({ pod: p, otherPods: others });
const required = (terms: V1NodeSelector) =>
  pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } } });

describe('NodeAffinity: nodeSelector and required node affinity', () => {
  it.each([
    { name: 'selector matches', p: pod({ nodeSelector: { zone: 'a' } }), ok: true },
    { name: 'selector value differs', p: pod({ nodeSelector: { zone: 'b' } }), ok: false },
    { name: 'selector label missing', p: pod({ nodeSelector: { disk: 'ssd' } }), ok: false },
    {
      name: 'In',
      p: required({
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
      }),
      ok: true,
    },
    {
      name: 'NotIn on a missing label',
      p: required({
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['hdd'] }] }],
      }),
      ok: true,
    },
    {
      name: 'NotIn excluded',
      p: required({
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }],
      }),
      ok: false,
    },
    {
      name: 'Exists',
      p: required({ nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Exists' }] }] }),
      ok: true,
    },
    {
      name: 'DoesNotExist',
      p: required({ nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'DoesNotExist' }] }] }),
      ok: false,
    },
    {
      name: 'Gt',
      p: required({
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }],
      }),
      ok: true,
    },
    {
      name: 'Lt',
      p: required({
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['4'] }] }],
      }),
      ok: false,
    },
    {
      name: 'Gt with a non-integer value matches nothing',
      p: required({
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['x'] }] }],
      }),
      ok: false,
    },
    {
      name: 'terms are ORed',
      p: required({
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z'] }] },
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
        ],
      }),
      ok: true,
    },
    { name: 'an empty term matches nothing', p: required({ nodeSelectorTerms: [{}] }), ok: false },
    {
      name: 'matchFields metadata.name',
      p: required({
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }],
      }),
      ok: true,
    },
    {
      name: 'matchFields other node',
      p: required({
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] }],
      }),
      ok: false,
    },
  ])('$name', ({ p, ok }) => {
    expect(admitOn(p)).toEqual(ok ? { admit: true } : affinityFailure);
  });
});

describe('NodeName', () => {
  it.each([
    { nodeName: undefined, ok: true },
    { nodeName: 'node-1', ok: true },
    { nodeName: 'node-2', ok: false },
  ])('spec.nodeName $nodeName', ({ nodeName, ok }) => {
    const p = nodeName === undefined ? pod() : pod({ nodeName });
    expect(admitOn(p)).toEqual(
      ok
        ? { admit: true }
        : {
            admit: false,
            reason: 'NodeName',
            message: "Predicate NodeName failed: node(s) didn't match the requested node name",
          },
    );
  });
});

describe('NodePorts: host port conflicts', () => {
  const withPort = (hostPort: number, protocol = 'TCP', hostIP?: string) =>
    pod({
      containers: [
        {
          name: 'c',
          ports: [{ containerPort: 80, hostPort, protocol, ...(hostIP === undefined ? {} : { hostIP }) }],
        },
      ],
    });
  it.each([
    { name: 'same port and protocol', held: withPort(8080), want: withPort(8080), ok: false },
    { name: 'other protocol', held: withPort(8080), want: withPort(8080, 'UDP'), ok: true },
    { name: 'other port', held: withPort(8080), want: withPort(8081), ok: true },
    {
      name: 'different specific IPs',
      held: withPort(8080, 'TCP', '10.0.0.1'),
      want: withPort(8080, 'TCP', '10.0.0.2'),
      ok: true,
    },
    {
      name: 'wildcard against a specific IP',
      held: withPort(8080, 'TCP', '10.0.0.1'),
      want: withPort(8080),
      ok: false,
    },
  ])('$name', ({ held, want, ok }) => {
    expect(admitOn(want, node({ labels }), [held])).toEqual(
      ok
        ? { admit: true }
        : {
            admit: false,
            reason: 'NodePorts',
            message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
          },
    );
  });
});

describe('TaintToleration: only NoExecute taints, never for static pods', () => {
  const failure = {
    admit: false,
    reason: 'TaintToleration',
    message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
  };
  const tainted = node({ labels, taints: [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }] });
  it.each([
    { name: 'untolerated NoExecute', p: pod(), n: tainted, ok: false },
    {
      name: "NoSchedule is the scheduler's business",
      p: pod(),
      n: node({ labels, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }),
      ok: true,
    },
    {
      name: 'Equal toleration',
      p: pod({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoExecute' }] }),
      n: tainted,
      ok: true,
    },
    {
      name: 'Equal with another value',
      p: pod({ tolerations: [{ key: 'dedicated', value: 'web' }] }),
      n: tainted,
      ok: false,
    },
    {
      name: 'Exists without key tolerates everything',
      p: pod({ tolerations: [{ operator: 'Exists' }] }),
      n: tainted,
      ok: true,
    },
    {
      name: 'toleration for another effect',
      p: pod({ tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] }),
      n: tainted,
      ok: false,
    },
    {
      name: 'static pod',
      p: pod({}, { annotations: { 'kubernetes.io/config.source': 'file' } }),
      n: tainted,
      ok: true,
    },
  ])('$name', ({ p, n, ok }) => {
    expect(admitOn(p, n)).toEqual(ok ? { admit: true } : failure);
  });
});

describe('node OS', () => {
  it.each([
    {
      name: 'os label linux',
      p: pod({}, { labels: { 'kubernetes.io/os': 'linux' } }),
      result: { admit: true },
    },
    {
      name: 'os label windows',
      p: pod({}, { labels: { 'kubernetes.io/os': 'windows' } }),
      result: {
        admit: false,
        reason: 'PodOSSelectorNodeLabelDoesNotMatch',
        message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
      },
    },
    {
      name: 'spec.os windows',
      p: pod({ os: { name: 'windows' } }),
      result: {
        admit: false,
        reason: 'PodOSNotSupported',
        message: "Failed to admit pod as the OS field doesn't match node OS",
      },
    },
    { name: 'spec.os linux', p: pod({ os: { name: 'linux' } }), result: { admit: true } },
  ])('$name', ({ p, result }) => {
    expect(admitOn(p)).toEqual(result);
  });

  it('the OS checks come before resources', () => {
    const p = pod({
      os: { name: 'windows' },
      containers: [{ name: 'c', resources: { requests: { cpu: '64' } } }],
    });
    expect(admitOn(p).reason).toBe('PodOSNotSupported');
  });
});
