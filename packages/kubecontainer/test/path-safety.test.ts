// kube-apiserver's path rules and messages, and safeMakeDir: directories below a volume are
// created without following a symlink out of it; symlinks that stay inside are followed.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  formatFieldError,
  isDns1123Label,
  isDns1123Subdomain,
  safeMakeDir,
  UnsafePathError,
  validateLocalDescendingPath,
  validatePathComponent,
} from '../src/index.js';

describe('kube-apiserver path rules', () => {
  it('DNS-1123 labels and subdomains, with upstream messages', () => {
    expect(isDns1123Label('my-name')).toEqual([]);
    expect(isDns1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
    expect(isDns1123Label('../x')[0]).toMatch(/^a lowercase RFC 1123 label must consist of/);
    expect(isDns1123Label('a\nb')).toHaveLength(1);
    expect(isDns1123Subdomain('web.example')).toEqual([]);
    expect(isDns1123Subdomain('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
    expect(isDns1123Subdomain('we"b')[0]).toMatch(/^a lowercase RFC 1123 subdomain/);
  });

  it('local descending paths: relative, no .. element; nothing decoded', () => {
    expect(validateLocalDescendingPath('a/b')).toEqual([]);
    expect(validateLocalDescendingPath('a/..b/c..')).toEqual([]);
    expect(validateLocalDescendingPath('%2e%2e/%2e%2e')).toEqual([]);
    expect(validateLocalDescendingPath('../x')).toEqual(["must not contain '..'"]);
    expect(validateLocalDescendingPath('/a/../b')).toEqual([
      'must be a relative path',
      "must not contain '..'",
    ]);
  });

  it('one path component', () => {
    expect(validatePathComponent('0f1e-uid')).toEqual([]);
    expect(validatePathComponent('')).toEqual(['must not be empty']);
    expect(validatePathComponent('..')).toEqual(["must not be '.' or '..'"]);
    expect(validatePathComponent('a/b')).toEqual(["must not contain '/'"]);
    expect(validatePathComponent('a\0')).toEqual(['must not contain NUL']);
    expect(validatePathComponent('é'.repeat(128))).toEqual(['must be no more than 255 bytes']);
  });

  it('formats like field.Error', () => {
    expect(formatFieldError({ field: 'metadata.name', value: 'a"b', detail: 'x' })).toBe(
      'metadata.name: Invalid value: "a\\"b": x',
    );
  });
});

describe('safeMakeDir', () => {
  let dir: string;
  let vol: string;
  let outside: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'safe-path-'));
    vol = join(dir, 'vol');
    outside = join(dir, 'outside');
    mkdirSync(vol);
    mkdirSync(outside);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates every missing directory with the mode, past the umask, and returns the real path', async () => {
    expect(await safeMakeDir(vol, 'a/./b//c', 0o777)).toBe(join(vol, 'a', 'b', 'c'));
    expect(statSync(join(vol, 'a', 'b')).mode & 0o777).toBe(0o777);
    expect(await safeMakeDir(vol, 'a/b/c', 0o777)).toBe(join(vol, 'a', 'b', 'c')); // idempotent
  });

  it('an existing file as the last component is returned (a file subPath), not as a middle one', async () => {
    writeFileSync(join(vol, 'f'), 'x');
    expect(await safeMakeDir(vol, 'f', 0o755)).toBe(join(vol, 'f'));
    await expect(safeMakeDir(vol, 'f/g', 0o755)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it.each([
    ['..', '../outside/x'],
    ['absolute', '/tmp/x'],
  ])('refuses %s before touching the disk', async (_, sub) => {
    await expect(safeMakeDir(vol, sub, 0o755)).rejects.toBeInstanceOf(UnsafePathError);
    expect(readdirSync(outside)).toEqual([]);
  });

  it.each([
    ['to /', '/', 'link/tmp'],
    ['to a directory outside', 'OUTSIDE', 'link/new'],
    ['relative, climbing out', '../outside', 'link/new'],
    ['dangling', 'MISSING', 'link/new'],
  ])('refuses a symlink %s; nothing is created outside', async (_, target, sub) => {
    const to = target === 'OUTSIDE' ? outside : target === 'MISSING' ? join(outside, 'missing') : target;
    symlinkSync(to, join(vol, 'link'));
    await expect(safeMakeDir(vol, sub, 0o755)).rejects.toBeInstanceOf(UnsafePathError);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('follows symlinks that stay inside the volume (relative or absolute, chained)', async () => {
    mkdirSync(join(vol, 'real'));
    symlinkSync('real', join(vol, 'rel'));
    symlinkSync(join(vol, 'rel'), join(vol, 'abs'));
    expect(await safeMakeDir(vol, 'abs/x', 0o755)).toBe(join(vol, 'real', 'x'));
  });

  it('a symlink loop ends with an error', async () => {
    symlinkSync('b', join(vol, 'a'));
    symlinkSync('a', join(vol, 'b'));
    await expect(safeMakeDir(vol, 'a/x', 0o755)).rejects.toBeInstanceOf(UnsafePathError);
  });
});
