import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX_IMAGE_REF, buildBusyboxImage } from '@nodeagent/test-support/busybox-image';
import { findBinary, runChecked } from '@nodeagent/test-support/command';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { buildTar, TarError } from '@nodeagent/test-support/tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nodeagent-tartest-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Extract with GNU tar (an independent reader of the format) into a fresh directory. */
async function extract(archive: Buffer, name: string): Promise<string> {
  const file = join(dir, `${name}.tar`);
  const out = join(dir, name);
  await writeFile(file, archive);
  await runChecked(['mkdir', '-p', out]);
  await runChecked(['tar', '-xf', file, '-C', out]);
  return out;
}

describe.runIf(findBinary('tar'))('buildTar', () => {
  it('writes files, directories, symlinks and long (prefix-split) paths that GNU tar reads back', async () => {
    const long = `${'d'.repeat(60)}/${'e'.repeat(60)}/file.txt`;
    const archive = buildTar([
      { type: 'dir', path: 'a' },
      { type: 'file', path: 'a/x.txt', data: Buffer.from('x'.repeat(700)), mode: 0o600 },
      { type: 'symlink', path: 'a/link', target: 'x.txt' },
      { type: 'file', path: long, data: Buffer.from('deep') },
      { type: 'dir', path: 'sticky', mode: 0o1777 },
    ]);
    expect(archive.length % 512).toBe(0);
    const listing = await runChecked(['tar', '-tvf', '-', '--numeric-owner'], { input: archive });
    expect(listing).toMatch(/-rw------- 0\/0 +700 1970-01-01 00:00 a\/x.txt/);
    const out = await extract(archive, 'basic');
    expect(await readFile(join(out, 'a/x.txt'), 'utf8')).toBe('x'.repeat(700));
    expect(await readlink(join(out, 'a/link'))).toBe('x.txt');
    expect(await readFile(join(out, long), 'utf8')).toBe('deep');
    expect((await stat(join(out, 'sticky'))).mode & 0o7777).toBe(0o1777);
  });

  it('is byte-for-byte deterministic', () => {
    const entries = [{ type: 'file', path: 'f', data: Buffer.from('same') }] as const;
    expect(buildTar(entries).equals(buildTar(entries))).toBe(true);
  });

  it('rejects unsafe, duplicate and oversized entries', () => {
    const data = Buffer.from('');
    expect(() => buildTar([{ type: 'file', path: '/abs', data }])).toThrow(TarError);
    expect(() => buildTar([{ type: 'file', path: 'a/../../b', data }])).toThrow(TarError);
    expect(() =>
      buildTar([
        { type: 'dir', path: 'a' },
        { type: 'dir', path: 'a' },
      ]),
    ).toThrow(TarError);
    expect(() => buildTar([{ type: 'file', path: 'x'.repeat(101), data }])).toThrow(TarError);
    expect(() => buildTar([{ type: 'symlink', path: 'l', target: 't'.repeat(101) }])).toThrow(TarError);
  });
});

describeRealNode('busybox OCI image', ['busybox'], () => {
  it('is a valid OCI layout with stable digests and the image name annotation', async () => {
    const image = await buildBusyboxImage();
    const again = await buildBusyboxImage();
    expect(again.manifestDigest).toBe(image.manifestDigest);
    expect(again.archive.equals(image.archive)).toBe(true);
    expect(image.ref).toBe(BUSYBOX_IMAGE_REF);

    const out = await extract(image.archive, 'oci');
    expect(JSON.parse(await readFile(join(out, 'oci-layout'), 'utf8'))).toEqual({
      imageLayoutVersion: '1.0.0',
    });
    const blob = (d: string) => readFile(join(out, 'blobs/sha256', d.slice('sha256:'.length)));
    const index = JSON.parse(await readFile(join(out, 'index.json'), 'utf8'));
    const desc = index.manifests[0];
    expect(desc.annotations['io.containerd.image.name']).toBe(BUSYBOX_IMAGE_REF);
    expect(desc.digest).toBe(image.manifestDigest);
    const manifestBytes = await blob(desc.digest);
    expect(sha(manifestBytes)).toBe(desc.digest);
    expect(manifestBytes.length).toBe(desc.size);
    const manifest = JSON.parse(manifestBytes.toString());
    const configBytes = await blob(manifest.config.digest);
    expect(sha(configBytes)).toBe(image.configDigest);
    const config = JSON.parse(configBytes.toString());
    expect(config).toMatchObject({
      architecture: process.arch === 'x64' ? 'amd64' : process.arch,
      os: 'linux',
    });
    expect(config.config.Env).toContain('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    const layer = await blob(manifest.layers[0].digest);
    expect(config.rootfs.diff_ids).toEqual([sha(layer)]);

    const rootfs = await extract(layer, 'rootfs');
    expect((await readFile(join(rootfs, 'bin/busybox'))).equals(await readFile('/bin/busybox'))).toBe(true);
    for (const applet of ['sh', 'sleep', 'httpd', 'wget', 'nc', 'cat']) {
      expect(await readlink(join(rootfs, 'bin', applet))).toBe('busybox');
    }
    // The symlinked applets actually run from the extracted rootfs.
    expect(await runChecked([join(rootfs, 'bin/echo'), 'applet works'])).toBe('applet works\n');
  });

  it('honours a custom ref and command', async () => {
    const image = await buildBusyboxImage({ ref: 'registry.local/other:v1', cmd: ['sleep', '1'] });
    const out = await extract(image.archive, 'custom');
    const index = JSON.parse(await readFile(join(out, 'index.json'), 'utf8'));
    expect(index.manifests[0].annotations['io.containerd.image.name']).toBe('registry.local/other:v1');
    const config = JSON.parse(
      (await readFile(join(out, 'blobs/sha256', image.configDigest.slice(7)))).toString(),
    );
    expect(config.config.Cmd).toEqual(['sleep', '1']);
  });
});
