/**
 * The kubelet's serving certificate when `--tls-cert-file`/`--tls-private-key-file` are not
 * given: a self-signed certificate for the host, CN `<hostname>@<unix seconds>`, kept as
 * `kubelet.crt` / `kubelet.key` in the certificate directory and reused from there on the
 * next start (upstream `GenerateSelfSignedCertKey` + `--cert-dir`). Generated with the
 * `openssl` binary (Node has no certificate builder).
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { hostname as osHostname, tmpdir } from 'node:os';
import { join } from 'node:path';

/** A PEM certificate and its key. */
export interface ServingCertificate {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
}

/** Options of {@link loadOrGenerateServingCertificate}. */
export interface ServingCertificateOptions {
  /** `--cert-dir`: where `kubelet.crt`/`kubelet.key` are kept. @default none (not persisted) */
  readonly certDir?: string;
  /** Host name in the CN and a DNS SAN. @default os.hostname() */
  readonly hostname?: string;
  /** Extra SANs (IP addresses or DNS names). @default ['127.0.0.1', 'localhost'] */
  readonly alternateNames?: readonly string[];
  /** Validity, days. @default 365 */
  readonly validityDays?: number;
  /** @default 'openssl' */
  readonly opensslPath?: string;
  /** Clock for the CN's timestamp, ms. @default Date.now */
  readonly nowMs?: () => number;
}

/** `openssl` failed to make the certificate. */
export class ServingCertificateError extends Error {
  override readonly name = 'ServingCertificateError';
}

function run(openssl: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(openssl, [...args], { timeout: 30_000 }, (err, _out, stderr) =>
      err
        ? reject(
            new ServingCertificateError(`openssl ${args[0]} failed: ${String(stderr).trim() || err.message}`),
          )
        : resolve(),
    );
  });
}

/** Reads the kept certificate from `certDir`, or generates (and keeps) a self-signed one. */
export async function loadOrGenerateServingCertificate(
  options: ServingCertificateOptions = {},
): Promise<ServingCertificate> {
  if (options.certDir !== undefined) {
    try {
      return {
        cert: await readFile(join(options.certDir, 'kubelet.crt'), 'utf8'),
        key: await readFile(join(options.certDir, 'kubelet.key'), 'utf8'),
      };
    } catch {
      // Not there yet: generate below.
    }
  }
  const host = options.hostname ?? osHostname();
  const names = [host, ...(options.alternateNames ?? ['127.0.0.1', 'localhost'])];
  const san = [...new Set(names)].map((n) => (isIP(n) !== 0 ? `IP:${n}` : `DNS:${n}`)).join(',');
  const cn = `${host}@${Math.floor((options.nowMs ?? Date.now)() / 1000)}`;
  const dir = await mkdtemp(join(tmpdir(), 'kubelet-serving-'));
  try {
    await run(options.opensslPath ?? 'openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'kubelet.key'),
      '-out',
      join(dir, 'kubelet.crt'),
      '-days',
      String(options.validityDays ?? 365),
      '-sha256',
      '-subj',
      `/CN=${cn.replace(/[\\/+=]/g, (c) => `\\${c}`)}`,
      '-addext',
      `subjectAltName=${san}`,
      '-addext',
      'extendedKeyUsage=serverAuth',
    ]);
    const pair = {
      cert: await readFile(join(dir, 'kubelet.crt'), 'utf8'),
      key: await readFile(join(dir, 'kubelet.key'), 'utf8'),
    };
    if (options.certDir !== undefined) {
      await mkdir(options.certDir, { recursive: true });
      await writeFile(join(options.certDir, 'kubelet.crt'), pair.cert);
      await writeFile(join(options.certDir, 'kubelet.key'), pair.key, { mode: 0o600 });
    }
    return pair;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
