import { describe, expect, it } from 'vitest';
import { containerHashInput, hashContainer, stableContainerKey } from '../src/container-hash.js';

// Expected values, derived the way upstream computes them:
//   HashContainer(c) = fnv32a( spew %#v of json.Marshal(map[string]string{"name": c.Name, "image": c.Image}) )
// Go's json.Marshal of a map sorts keys and escapes <, >, & as \u003c, \u003e, \u0026.
// hashutil.DeepHashObject prints the []byte with spew ConfigState{Indent:" ", SortKeys, DisableMethods,
// SpewKeys} and "%#v": the type in parentheses, then each byte in decimal, one space apart:
//   ([]uint8)[123 34 105 109 ...]
// The JSON column below was written by hand from those rules; the hashes are FNV-1a 32 of that printed form.
// The first row is upstream's own vector: pkg/kubelet/container/container_hash_test.go `sampleV131HashValue`
// (0x8e45cbd0, for a container with command, args, ports, env and resources too) and helpers_test.go TestHashContainer.
describe('hashContainer equals the kubelet HashContainer', () => {
  it.each([
    ['test_container', 'foo/image:v1', '{"image":"foo/image:v1","name":"test_container"}', 0x8e45cbd0],
    ['nginx', 'nginx:1.25', '{"image":"nginx:1.25","name":"nginx"}', 0x5d0e8bc9],
    ['app', '', '{"image":"","name":"app"}', 0x0613cf98],
    [
      'web',
      'registry.local:5000/a&b<c>',
      '{"image":"registry.local:5000/a\\u0026b\\u003cc\\u003e","name":"web"}',
      0x9dd11b75,
    ],
    [
      'sidecar',
      'docker.io/library/busybox:1.36',
      '{"image":"docker.io/library/busybox:1.36","name":"sidecar"}',
      0xb52b55f2,
    ],
    ['ünï', 'img:λ', '{"image":"img:λ","name":"ünï"}', 0xa62c6077],
  ] as const)('%s / %s', (name, image, json, expected) => {
    const container = { name, image, args: ['/bin/sh', '-c', 'echo abc'], ports: [{ containerPort: 8001 }] };
    expect(containerHashInput(container)).toBe(`([]uint8)[${[...Buffer.from(json, 'utf8')].join(' ')}]`);
    expect(hashContainer(container)).toBe(BigInt(expected));
  });

  it("upstream's sampleContainer (every field set) hashes to sampleV131HashValue", () => {
    const sample = {
      name: 'test_container',
      image: 'foo/image:v1',
      command: ['/bin/testcmd'],
      args: ['/bin/sh', '-c', 'echo abc'],
      ports: [{ containerPort: 8001 }],
      env: [
        { name: 'ENV_FOO', value: 'bar' },
        { name: 'ENV_BAR', valueFrom: { secretKeyRef: { name: 'foo', key: 'bar', optional: true } } },
      ],
      resources: { limits: { foo: '1G' }, requests: { foo: '500M' } },
    };
    expect(hashContainer(sample)).toBe(0x8e45cbd0n);
  });

  it('ignores every field but name and image (upstream hashes only those)', () => {
    const base = { name: 'c', image: 'busybox' };
    expect(hashContainer({ ...base, command: ['sleep'], env: [{ name: 'A', value: '1' }] })).toBe(
      hashContainer(base),
    );
    expect(hashContainer({ ...base, image: 'busybox:2' })).not.toBe(hashContainer(base));
  });

  it('the backoff key carries the hash in hex (upstream GetStableKey)', () => {
    const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u' } };
    expect(stableContainerKey(pod, { name: 'test_container', image: 'foo/image:v1' })).toBe(
      'p_ns_u_test_container_8e45cbd0',
    );
  });
});
