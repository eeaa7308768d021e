// applyDefaults: UID from md5(host, file, pod), name suffix, namespace, annotations, toleration, phase.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Fnv128a } from '../src/fnv128a.js';
import {
  applyStaticPodDefaults,
  canonicalJson,
  decodeManifest,
  PodSourceError,
  staticPodUid,
} from '../src/index.js';
import { podYaml } from './helpers.js';

const manifest: V1Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web' },
  spec: { containers: [{ name: 'main', image: 'nginx' }] },
};

// The dump of the pod, written out by hand: keys sorted, no whitespace.
const dump =
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"image":"nginx","name":"main"}]}}';

describe('static pod defaults', () => {
  // Expected values computed outside this code base (a few lines of Python FNV-1a 128 over
  // `dump + "host:Node-1" + "file:/etc/kubernetes/manifests/web.yaml"`, and `dump + "url:…"`).
  it('file pods: UID = fnv128a(<pod> "host:<node>" "file:<path>"), hex', () => {
    expect(canonicalJson(manifest)).toBe(dump);
    const origin = {
      nodeName: 'Node-1',
      source: 'file' as const,
      location: '/etc/kubernetes/manifests/web.yaml',
    };
    expect(staticPodUid(manifest, origin)).toBe('9e563eafcaadc0cfd05f21fe8da8612c');
  });

  it('http pods: UID = fnv128a(<pod> "url:<url>") (no host)', () => {
    const origin = { nodeName: 'node-1', source: 'http' as const, location: 'http://127.0.0.1/pods' };
    expect(staticPodUid(manifest, origin)).toBe('649e54738eb00819a5a77adf1d0f3782');
  });

  it('FNV-1a 128 test vectors', () => {
    expect(new Fnv128a().hex()).toBe('6c62272e07bb014262b821756295c58d');
    expect(new Fnv128a().update('a').hex()).toBe('d228cb696f1a8caf78912b704e4a8964');
    expect(new Fnv128a().update('foo').update('bar').hex()).toBe('343e1662793c64bf6f0d3597ba446f18');
  });

  it('the UID changes with the content, the node and the path, and not with key order', () => {
    const origin = { nodeName: 'n', source: 'file' as const, location: '/m/web.yaml' };
    const base = staticPodUid(manifest, origin);
    const reordered: V1Pod = {
      spec: manifest.spec ?? { containers: [] },
      metadata: { name: 'web' },
      kind: 'Pod',
      apiVersion: 'v1',
    };
    expect(staticPodUid(reordered, origin)).toBe(base);
    expect(
      staticPodUid({ ...manifest, spec: { containers: [{ name: 'main', image: 'nginx:2' }] } }, origin),
    ).not.toBe(base);
    expect(staticPodUid(manifest, { ...origin, nodeName: 'm' })).not.toBe(base);
    expect(staticPodUid(manifest, { ...origin, location: '/m/other.yaml' })).not.toBe(base);
  });

  it('applies name suffix (lower-cased node), namespace, nodeName, config.hash, NoExecute toleration, Pending', () => {
    const pod = applyStaticPodDefaults(manifest, {
      nodeName: 'Node-1',
      source: 'file',
      location: '/m/web.yaml',
    });
    const uid = pod.metadata?.uid ?? '';
    expect(uid).toMatch(/^[0-9a-f]{32}$/);
    expect(pod.metadata).toEqual({
      name: 'web-node-1',
      namespace: 'default',
      uid,
      annotations: { 'kubernetes.io/config.hash': uid },
    });
    expect(pod.spec?.nodeName).toBe('Node-1');
    expect(pod.spec?.tolerations).toEqual([{ operator: 'Exists', effect: 'NoExecute' }]);
    expect(pod.status).toEqual({ phase: 'Pending' });
    // The input is not touched.
    expect(manifest.metadata).toEqual({ name: 'web' });
  });

  it('keeps a UID and a namespace the manifest sets; http pods get no toleration', () => {
    const pod = applyStaticPodDefaults(
      { ...manifest, metadata: { name: 'web', namespace: 'kube-system', uid: 'fixed' } },
      { nodeName: 'n', source: 'http', location: 'http://x' },
    );
    expect(pod.metadata?.uid).toBe('fixed');
    expect(pod.metadata?.namespace).toBe('kube-system');
    expect(pod.metadata?.annotations?.['kubernetes.io/config.hash']).toBe('fixed');
    expect(pod.spec?.tolerations).toBeUndefined();
  });

  it('decodes YAML and JSON to the same pod', () => {
    const origin = { nodeName: 'n', source: 'file' as const, location: '/m/web' };
    expect(decodeManifest(JSON.stringify(manifest), origin)).toEqual(
      decodeManifest(podYaml('web', 'nginx'), origin),
    );
  });

  it.each([
    { name: 'bad YAML', text: 'apiVersion: v1\nkind: Pod\nmetadata: [\n', code: 'Undecodable', reason: /./ },
    {
      name: 'a Deployment',
      text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n',
      code: 'NotAPod',
      reason: /expected a v1 Pod, got apps\/v1 Deployment/,
    },
    {
      name: 'missing name',
      text: 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    image: x\n',
      code: 'Invalid',
      reason: /metadata.name: Required value/,
    },
    {
      name: 'no containers',
      text: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec: {}\n',
      code: 'Invalid',
      reason: /spec.containers: Required value/,
    },
    {
      name: 'a container without image',
      text: podYaml('p', '""'),
      code: 'Invalid',
      reason: /spec.containers\[0\].image: Required value/,
    },
    {
      name: 'two YAML documents',
      text: `${podYaml('a')}---\n${podYaml('b')}`,
      code: 'Undecodable',
      reason: /expected one object, found 2/,
    },
    { name: 'a scalar', text: '42\n', code: 'Undecodable', reason: /not an object/ },
  ])('refuses $name with a typed error naming the file', ({ text, code, reason }) => {
    const origin = { nodeName: 'n', source: 'file' as const, location: '/m/bad.yaml' };
    let error: unknown;
    try {
      decodeManifest(text, origin);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PodSourceError);
    const e = error as PodSourceError;
    expect([e.code, e.source, e.location]).toEqual([code, 'file', '/m/bad.yaml']);
    expect(e.reason).toMatch(reason);
  });
});
