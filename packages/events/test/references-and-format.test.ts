// Object references as the kubelet builds them, the pod/container adapter, and the Go-style
// message formatting of eventf.
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import {
  containerReference,
  EventRecorder,
  InvalidReferenceError,
  nodeReference,
  objectReference,
  podEventRecorder,
  podReference,
  sprintf,
} from '../src/index.js';
import { FakeEventSink } from '../src/testing.js';

const pod = {
  metadata: { name: 'web', namespace: 'shop', uid: 'u1', resourceVersion: '42' },
  spec: {
    containers: [{ name: 'app' }],
    initContainers: [{ name: 'setup' }],
    ephemeralContainers: [{ name: 'dbg' }],
  },
};

describe('references', () => {
  it('a pod: kind Pod, apiVersion v1, namespace, name, uid and resourceVersion', () => {
    expect(podReference(pod)).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      namespace: 'shop',
      name: 'web',
      uid: 'u1',
      resourceVersion: '42',
    });
  });

  it('a container: the pod with fieldPath spec.containers{…}, spec.initContainers{…} or spec.ephemeralContainers{…}', () => {
    expect(containerReference(pod, 'app').fieldPath).toBe('spec.containers{app}');
    expect(containerReference(pod, 'setup').fieldPath).toBe('spec.initContainers{setup}');
    expect(containerReference(pod, 'dbg').fieldPath).toBe('spec.ephemeralContainers{dbg}');
    expect(() => containerReference(pod, 'nope')).toThrow(InvalidReferenceError);
    expect(() => containerReference(pod, 'nope')).toThrow(/Pod shop\/web.*no container "nope"/);
  });

  it("the node: kind Node, the node name as name and UID, no namespace (the kubelet's nodeRef)", () => {
    expect(nodeReference('node-1')).toEqual({ kind: 'Node', name: 'node-1', uid: 'node-1' });
  });

  it('any object needs a kind and a name', () => {
    expect(
      objectReference({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'x' } }),
    ).toEqual({
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      name: 'd',
      namespace: 'x',
    });
    expect(() => objectReference({ metadata: { name: 'd' } })).toThrow(/no kind/);
    expect(() => objectReference({ kind: 'Pod', metadata: {} })).toThrow(/no metadata.name/);
  });
});

describe('podEventRecorder', () => {
  it('records container events with the container reference, pod events with the pod, and skips unknown containers', async () => {
    const sink = new FakeEventSink();
    const recorder = new EventRecorder({ sink, clock: new FakeClock(), host: 'node-1' });
    await recorder.start();
    const record = podEventRecorder(recorder);
    record(
      pod,
      { name: 'app' },
      'Warning',
      'Unhealthy',
      'Readiness probe failed: HTTP probe failed with statuscode: 503',
    );
    record(
      pod,
      undefined,
      'Normal',
      'SandboxChanged',
      'Pod sandbox changed, it will be killed and re-created.',
    );
    record(pod, { name: 'gone' }, 'Normal', 'Killing', 'Stopping container gone');
    await recorder.flush();
    expect(sink.list().map((e) => [e.reason, e.involvedObject.fieldPath])).toEqual([
      ['Unhealthy', 'spec.containers{app}'],
      ['SandboxChanged', undefined],
    ]);
    expect(recorder.dropped().get('invalid')).toBe(1);
  });
});

describe('eventf', () => {
  it('formats like Go for %s %v %d %q %%', () => {
    expect(sprintf('Back-off restarting failed container %s in pod %s', 'app', 'web_shop(u1)')).toBe(
      'Back-off restarting failed container app in pod web_shop(u1)',
    );
    expect(sprintf('Pulling image %q', 'nginx:1.27')).toBe('Pulling image "nginx:1.27"');
    expect(sprintf('%d%% of %v', 50.7, new Error('disk'))).toBe('50% of disk');
    expect(sprintf('%s and %s', 'one')).toBe('one and %!s(MISSING)');
    expect(sprintf('x', 1)).toBe('x%!(EXTRA 1)');
  });

  it('records the formatted message', async () => {
    const sink = new FakeEventSink();
    const recorder = new EventRecorder({ sink, clock: new FakeClock() });
    await recorder.start();
    recorder.eventf(
      nodeReference('node-1'),
      'Normal',
      'NodeReady',
      'Node %s status is now: %s',
      'node-1',
      'NodeReady',
    );
    await recorder.flush();
    expect(sink.list()[0]?.message).toBe('Node node-1 status is now: NodeReady');
  });
});
