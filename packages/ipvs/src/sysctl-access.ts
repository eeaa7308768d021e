/**
 * Reading and writing kernel sysctls (`/proc/sys/<name>`), and kube-proxy's `EnsureSysctl`:
 * write a value only when it differs, and fail with an error that names the sysctl.
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { runCommand } from '@nodeagent/core';

/** Reads and writes integer sysctls by their `/proc/sys`-relative name (`net/ipv4/ip_forward`). */
export interface SysctlAccess {
  /** The current value. @throws when the sysctl cannot be read (missing on this kernel, not a number). */
  get(name: string): Promise<number>;
  /** Writes `value`. @throws when it cannot be written. */
  set(name: string, value: number): Promise<void>;
  /** The kernel release (`/proc/sys/kernel/osrelease`, e.g. `6.1.0-18-amd64`). */
  kernelRelease(): Promise<string>;
}

/** A sysctl kube-proxy needs could not be set; the message is upstream's `can't set sysctl <name> to <value>: <cause>`. */
export class SysctlError extends Error {
  override readonly name = 'SysctlError';
  /** The sysctl (`net/ipv4/vs/conntrack`). */
  readonly sysctl: string;
  /** The value that could not be written. */
  readonly value: number;
  /** @param sysctl the name; @param value wanted value; @param cause why it failed. */
  constructor(sysctl: string, value: number, cause: unknown) {
    super(
      `can't set sysctl ${sysctl} to ${value}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.sysctl = sysctl;
    this.value = value;
  }
}

/** Options of {@link ProcSysctl}. */
export interface ProcSysctlOptions {
  /**
   * The sysctl tree (a temp directory in tests).
   * @default '/proc/sys'
   */
  readonly root?: string;
  /**
   * Read and write the sysctls of this named network namespace (`/run/netns/<name>`): the
   * `net/*` sysctls are per namespace, so the files are opened by `cat` / `tee` started
   * there with `nsenter --net=`.
   * @default undefined (this process's namespace, through the file system directly)
   */
  readonly netns?: string;
}

const NAME_RE = /^[a-z0-9_]+(?:\/[A-Za-z0-9_.-]+)+$/;

/** {@link SysctlAccess} over the `/proc/sys` files. */
export class ProcSysctl implements SysctlAccess {
  readonly #root: string;
  readonly #netns: string | undefined;

  /** @param options root directory and network namespace. */
  constructor(options: ProcSysctlOptions = {}) {
    this.#root = (options.root ?? '/proc/sys').replace(/\/+$/, '');
    this.#netns = options.netns;
  }

  #path(name: string): string {
    if (!NAME_RE.test(name) || name.split('/').includes('..')) {
      throw new TypeError(`${JSON.stringify(name)} is not a sysctl name`);
    }
    return `${this.#root}/${name}`;
  }

  async #read(path: string): Promise<string> {
    if (this.#netns === undefined) return readFile(path, 'utf8');
    const r = await runCommand(['cat', path], { netns: this.#netns });
    if (r.code !== 0) throw new Error(r.stderr.trim() || `cat ${path} exited with ${r.code}`);
    return r.stdout;
  }

  /** @inheritdoc */
  async get(name: string): Promise<number> {
    const text = (await this.#read(this.#path(name))).trim();
    if (!/^-?[0-9]+$/.test(text))
      throw new Error(`sysctl ${name} holds ${JSON.stringify(text)}, not an integer`);
    return Number(text);
  }

  /** @inheritdoc */
  async set(name: string, value: number): Promise<void> {
    const path = this.#path(name);
    if (this.#netns === undefined) {
      // 'r+' so a missing sysctl is an error (ENOENT), never a new file.
      await writeFile(path, String(value), { flag: 'r+' });
      return;
    }
    const r = await runCommand(['tee', path], { netns: this.#netns, input: String(value) });
    if (r.code !== 0) throw new Error(r.stderr.trim() || `tee ${path} exited with ${r.code}`);
  }

  /** @inheritdoc */
  async kernelRelease(): Promise<string> {
    return (await this.#read(this.#path('kernel/osrelease'))).trim();
  }
}

/** What {@link ensureSysctl} did. */
export interface SysctlChange {
  /** The sysctl. */
  readonly name: string;
  /** The value before (undefined when it could not be read). */
  readonly before: number | undefined;
  /** The value now. */
  readonly after: number;
  /** True when it was written. */
  readonly changed: boolean;
}

/**
 * kube-proxy's `EnsureSysctl`: reads the sysctl and writes `value` only if it differs (an
 * unreadable sysctl counts as different, so a missing one fails on the write).
 * @throws SysctlError naming the sysctl when the write fails.
 */
export async function ensureSysctl(access: SysctlAccess, name: string, value: number): Promise<SysctlChange> {
  const before = await access.get(name).catch(() => undefined);
  if (before === value) return { name, before, after: value, changed: false };
  try {
    await access.set(name, value);
  } catch (e) {
    throw new SysctlError(name, value, e);
  }
  return { name, before, after: value, changed: true };
}
