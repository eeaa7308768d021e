/**
 * Throwaway TLS material for the mini API server: a CA, a server certificate for loopback
 * and client certificates, generated with the `openssl` binary because Node 20 can create
 * keys but not X.509 certificates.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definedFields } from '@nodeagent/core';

/** A PEM certificate with its PEM private key. */
export interface CertificateAndKey {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM private key (PKCS#8). */
  readonly key: string;
}

/** TLS material the server was given (`tls: { cert, key, ca }`). */
export interface TlsMaterial extends CertificateAndKey {
  /**
   * PEM CA certificate(s) that signed `cert`; written to the kubeconfig as
   * `certificate-authority-data` and, with `requestCert`, trusted for client certificates.
   * Without it the kubeconfig relies on the client's system roots.
   */
  readonly ca?: string;
  /**
   * A client certificate written to the kubeconfig (`client-certificate-data` /
   * `client-key-data`) when `requestCert` is set; it must be signed by `ca`.
   */
  readonly clientCertificate?: CertificateAndKey;
}

/** A generated CA plus the certificates it signed. */
export interface SelfSignedTls extends TlsMaterial {
  /** The CA certificate (PEM). */
  readonly ca: string;
  /** The CA private key (PEM); kept so more client certificates can be issued. */
  readonly caKey: string;
}

/** Options of {@link createSelfSignedTls}. */
export interface SelfSignedTlsOptions {
  /**
   * DNS names and IP addresses of the server certificate.
   * @default ['127.0.0.1', '::1', 'localhost']
   */
  readonly hosts?: readonly string[];
  /** Also issue a client certificate with this common name (the user name). */
  readonly clientCommonName?: string;
  /**
   * Organizations (Kubernetes groups) of that client certificate.
   * @default ['system:masters']
   */
  readonly clientOrganizations?: readonly string[];
  /**
   * Validity of every certificate, in days.
   * @default 365
   */
  readonly validityDays?: number;
  /**
   * The `openssl` executable (a path or a name looked up on PATH).
   * @default 'openssl'
   */
  readonly opensslPath?: string;
}

/** Options of {@link issueClientCertificate}. */
export interface ClientCertificateOptions {
  /** Common name: the user name the server maps the certificate to. */
  readonly commonName: string;
  /**
   * Organizations (Kubernetes groups).
   * @default []
   */
  readonly organizations?: readonly string[];
  /** @default 365 */
  readonly validityDays?: number;
  /** @default 'openssl' */
  readonly opensslPath?: string;
}

/** The `openssl` binary is not installed (or not at the given path). */
export class OpensslNotFoundError extends Error {
  override readonly name = 'OpensslNotFoundError';
  /** The executable that was tried. */
  readonly opensslPath: string;
  constructor(opensslPath: string) {
    super(
      `cannot generate TLS certificates: the "${opensslPath}" executable was not found ` +
        '(install openssl, or pass tls: { cert, key, ca } with your own PEM material)',
    );
    this.opensslPath = opensslPath;
  }
}

/** `openssl` ran but failed. */
export class CertificateGenerationError extends Error {
  override readonly name = 'CertificateGenerationError';
  /** What openssl wrote to stderr. */
  readonly stderr: string;
  constructor(step: string, stderr: string, cause?: unknown) {
    super(`openssl failed to ${step}: ${stderr.trim() || String(cause)}`, { cause });
    this.stderr = stderr;
  }
}

const DEFAULT_HOSTS = ['127.0.0.1', '::1', 'localhost'];
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function run(openssl: string, args: readonly string[], step: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // execFile runs the binary directly: no shell, so no quoting of subjects or paths.
    execFile(openssl, [...args], { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new OpensslNotFoundError(openssl));
      reject(new CertificateGenerationError(step, String(stderr), err));
    });
  });
}

function subject(commonName: string, organizations: readonly string[] = []): string {
  // openssl's -subj syntax: '/' separates RDNs, '\' escapes.
  const esc = (s: string): string => s.replace(/[\\/+=]/g, (c) => `\\${c}`);
  return [...organizations.map((o) => `/O=${esc(o)}`), `/CN=${esc(commonName)}`].join('');
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'mini-apiserver-tls-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function signLeaf(
  openssl: string,
  dir: string,
  name: string,
  subj: string,
  extensions: string,
  ca: { cert: string; key: string },
  days: number,
): Promise<CertificateAndKey> {
  const f = (ext: string): string => join(dir, `${name}.${ext}`);
  await writeFile(f('ext'), extensions);
  await run(
    openssl,
    ['req', '-new', ...EC_KEY, '-keyout', f('key'), '-out', f('csr'), '-subj', subj],
    `create the ${name} key`,
  );
  await run(
    openssl,
    [
      'x509',
      '-req',
      '-in',
      f('csr'),
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-set_serial',
      `0x${randomBytes(16).toString('hex')}`,
      '-days',
      String(days),
      '-extfile',
      f('ext'),
      '-sha256',
      '-out',
      f('crt'),
    ],
    `sign the ${name} certificate`,
  );
  return { cert: await readFile(f('crt'), 'utf8'), key: await readFile(f('key'), 'utf8') };
}

async function writeCa(
  dir: string,
  ca: { ca: string; caKey: string },
): Promise<{ cert: string; key: string }> {
  const paths = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  await writeFile(paths.cert, ca.ca);
  await writeFile(paths.key, ca.caKey, { mode: 0o600 });
  return paths;
}

/**
 * Generates a throwaway CA, a server certificate for `hosts` and, when asked, a client
 * certificate — all EC P-256, in a temporary directory that is removed afterwards.
 *
 * @throws {@link OpensslNotFoundError} when `openssl` is missing
 * @throws {@link CertificateGenerationError} when openssl fails
 */
export async function createSelfSignedTls(options: SelfSignedTlsOptions = {}): Promise<SelfSignedTls> {
  const openssl = options.opensslPath ?? 'openssl';
  const days = options.validityDays ?? 365;
  const hosts = options.hosts ?? DEFAULT_HOSTS;
  return withTempDir(async (dir) => {
    const caPaths = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
    await run(
      openssl,
      [
        'req',
        '-x509',
        ...EC_KEY,
        '-keyout',
        caPaths.key,
        '-out',
        caPaths.cert,
        '-days',
        String(days),
        '-sha256',
        '-subj',
        subject(`mini-apiserver-ca@${Date.now()}`),
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
      ],
      'create the CA',
    );
    const san = hosts.map((h) => (isIP(h) !== 0 ? `IP:${h}` : `DNS:${h}`)).join(',');
    const server = await signLeaf(
      openssl,
      dir,
      'server',
      subject('mini-apiserver'),
      `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`,
      caPaths,
      days,
    );
    const client =
      options.clientCommonName === undefined
        ? undefined
        : await signLeaf(
            openssl,
            dir,
            'client',
            subject(options.clientCommonName, options.clientOrganizations ?? ['system:masters']),
            CLIENT_EXTENSIONS,
            caPaths,
            days,
          );
    return {
      ca: await readFile(caPaths.cert, 'utf8'),
      caKey: await readFile(caPaths.key, 'utf8'),
      ...server,
      ...definedFields({ clientCertificate: client }),
    };
  });
}

const CLIENT_EXTENSIONS =
  'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n';

/**
 * Issues a client certificate signed by a CA from {@link createSelfSignedTls}; the server
 * maps its common name to the user name and its organizations to groups.
 */
export async function issueClientCertificate(
  ca: { readonly ca: string; readonly caKey: string },
  options: ClientCertificateOptions,
): Promise<CertificateAndKey> {
  const openssl = options.opensslPath ?? 'openssl';
  return withTempDir(async (dir) =>
    signLeaf(
      openssl,
      dir,
      'client',
      subject(options.commonName, options.organizations ?? []),
      CLIENT_EXTENSIONS,
      await writeCa(dir, ca),
      options.validityDays ?? 365,
    ),
  );
}
