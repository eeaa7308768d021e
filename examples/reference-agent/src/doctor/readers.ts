/**
 * `nodeagent doctor`'s readers: everything it reads from the node (files under `/proc` and
 * `/sys`, statfs, HTTP, the CRI runtime, the API server), each bounded by a timeout and
 * turning every failure into a reading rather than an exception.
 *
 * @module
 */
import { readdir, readFile, readlink, statfs } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { dirname } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import {
  CgroupDriver,
  createCriClient,
  isDeadlineExceeded,
  isUnavailable,
  isUnimplemented,
} from '@nodeagent/cri';
import type { ApiServerDateReading, CertificateReading, CgroupReadings } from './checks.js';
import type {
  CallFailure,
  HttpAnswer,
  ReadResult,
  RuntimeReading,
  SocketOwner,
  StatfsReading,
} from './types.js';

function errorCode(e: unknown): string {
  return typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'EUNKNOWN';
}

/** Reads a text file into a {@link ReadResult}. */
export async function readText(path: string): Promise<ReadResult> {
  try {
    return { ok: true, text: await readFile(path, 'utf8') };
  } catch (e) {
    return { ok: false, code: errorCode(e), message: (e as Error).message };
  }
}

/** Reads `/sys/fs/cgroup` (or `root`). */
export async function readCgroups(root = '/sys/fs/cgroup'): Promise<CgroupReadings> {
  const controllers = await readText(`${root}/cgroup.controllers`);
  let rootEntries: CgroupReadings['rootEntries'];
  try {
    rootEntries = { ok: true, names: await readdir(root) };
  } catch (e) {
    rootEntries = { ok: false, message: (e as Error).message };
  }
  return { controllers, rootEntries };
}

/** statfs of `path`. */
export async function statfsReading(path: string): Promise<StatfsReading> {
  try {
    const s = await statfs(path);
    return { ok: true, bsize: s.bsize, blocks: s.blocks, bavail: s.bavail, files: s.files, ffree: s.ffree };
  } catch (e) {
    return { ok: false, code: errorCode(e), message: (e as Error).message };
  }
}

/** The nearest existing ancestor of `path` (where it would be created), itself when it exists. */
export async function nearestExisting(path: string): Promise<string> {
  let p = path;
  for (;;) {
    try {
      await statfs(p);
      return p;
    } catch {
      const up = dirname(p);
      if (up === p) return p;
      p = up;
    }
  }
}

/** GET `url` with a deadline; never rejects. */
export function httpGet(url: string, timeoutMs: number): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (a: HttpAnswer) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        resolve(a);
      }
    };
    const req = http.get(url, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 4 << 20) chunks.push(c);
      });
      res.on('end', () =>
        finish({
          ok: true,
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          ...(typeof res.headers.date === 'string' ? { date: res.headers.date } : {}),
        }),
      );
      res.on('error', (e) => finish({ ok: false, reason: 'error', message: e.message }));
    });
    const timer = setTimeout(() => {
      finish({ ok: false, reason: 'timeout', message: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (e) =>
      finish({
        ok: false,
        reason: errorCode(e) === 'ECONNREFUSED' ? 'refused' : 'error',
        message: e.message,
      }),
    );
  });
}

function callFailure(e: unknown, timeoutMs: number): CallFailure {
  const message = (e as Error).message ?? String(e);
  if (isDeadlineExceeded(e))
    return { ok: false, reason: 'timeout', message: `no answer within ${timeoutMs} ms` };
  if (isUnimplemented(e)) return { ok: false, reason: 'unimplemented', message };
  if (isUnavailable(e)) return { ok: false, reason: 'unavailable', message };
  return { ok: false, reason: 'error', message };
}

/** Rejects after `ms` with a deadline error (a guard around calls that might not honour theirs). */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('deadline'), { deadline: true })), ms);
  });
  return Promise.race([p, guard]).finally(() => clearTimeout(timer));
}

/**
 * Asks the CRI runtime at `endpoint` for `Version`, then `Status`, `RuntimeConfig` and
 * `ImageFsInfo`, each within `timeoutMs`.
 */
export async function readRuntime(endpoint: string, timeoutMs: number): Promise<RuntimeReading> {
  let cri: ReturnType<typeof createCriClient>;
  try {
    cri = createCriClient(endpoint, { timeoutMs });
  } catch (e) {
    return { endpoint, version: { ok: false, reason: 'error', message: (e as Error).message } };
  }
  const call = async <T>(fn: () => Promise<T>): Promise<{ ok: true; value: T } | CallFailure> => {
    try {
      return { ok: true, value: await withDeadline(fn(), timeoutMs + 1000) };
    } catch (e) {
      if ((e as { deadline?: boolean }).deadline === true)
        return { ok: false, reason: 'timeout', message: `no answer within ${timeoutMs} ms` };
      return callFailure(e, timeoutMs);
    }
  };
  try {
    const v = await call(() => cri.runtime.version({ version: 'v1' }, { timeoutMs }));
    if (!v.ok) return { endpoint, version: v };
    const [s, c, fs] = await Promise.all([
      call(() => cri.runtime.status({ verbose: false }, { timeoutMs })),
      call(() => cri.runtime.runtimeConfig({}, { timeoutMs })),
      call(() => cri.image.imageFsInfo({}, { timeoutMs })),
    ]);
    const linux = c.ok ? c.value.linux : undefined;
    const mount = fs.ok ? fs.value.imageFilesystems[0]?.fsId?.mountpoint : undefined;
    return {
      endpoint,
      version: {
        ok: true,
        runtimeName: v.value.runtimeName,
        runtimeVersion: v.value.runtimeVersion,
        runtimeApiVersion: v.value.runtimeApiVersion,
      },
      status: s.ok
        ? {
            ok: true,
            conditions: (s.value.status?.conditions ?? []).map((x) => ({
              type: x.type,
              status: x.status,
              reason: x.reason,
              message: x.message,
            })),
          }
        : s,
      cgroupDriver: !c.ok
        ? c
        : linux === undefined
          ? { ok: false, reason: 'unimplemented', message: 'RuntimeConfig has no linux section' }
          : { ok: true, driver: linux.cgroupDriver === CgroupDriver.CGROUPFS ? 'cgroupfs' : 'systemd' },
      ...(mount !== undefined && mount !== '' ? { imageFsMountpoint: mount } : {}),
    };
  } finally {
    cri.close();
  }
}

/** Where the API server is and how to reach it: `--kubeconfig`, or in-cluster, or nothing. */
export function loadKubeConfig(path: string | undefined, env: NodeJS.ProcessEnv): KubeConfig | undefined {
  const kc = new KubeConfig();
  if (path !== undefined) {
    kc.loadFromFile(path);
    return kc;
  }
  if (env.KUBERNETES_SERVICE_HOST !== undefined && env.KUBERNETES_SERVICE_PORT !== undefined) {
    kc.loadFromCluster();
    return kc;
  }
  return undefined;
}

/** GET `/version` on the API server and note the local clock around it and the `Date` header. */
export async function readApiServerDate(kc: KubeConfig, timeoutMs: number): Promise<ApiServerDateReading> {
  const server = kc.getCurrentCluster()?.server ?? '';
  if (server === '')
    return { ok: false, server: '(none)', reason: 'error', message: 'the kubeconfig has no current cluster' };
  let url: URL;
  try {
    url = new URL('/version', server);
  } catch (e) {
    return { ok: false, server, reason: 'error', message: (e as Error).message };
  }
  const options: https.RequestOptions = { method: 'GET', headers: {} };
  try {
    await kc.applyToHTTPSOptions(options);
  } catch (e) {
    return {
      ok: false,
      server,
      reason: 'error',
      message: `cannot use the kubeconfig's credentials: ${(e as Error).message}`,
    };
  }
  return new Promise((resolve) => {
    let done = false;
    const sentAtMs = Date.now();
    const finish = (r: ApiServerDateReading) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        resolve(r);
      }
    };
    const lib = url.protocol === 'http:' ? http : https;
    const req = lib.request(url, { ...options, agent: false }, (res) => {
      const receivedAtMs = Date.now();
      res.resume();
      const date = res.headers.date;
      finish({ ok: true, server, date: typeof date === 'string' ? date : undefined, sentAtMs, receivedAtMs });
    });
    const timer = setTimeout(() => {
      finish({ ok: false, server, reason: 'timeout', message: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (e) =>
      finish({
        ok: false,
        server,
        reason: errorCode(e) === 'ECONNREFUSED' ? 'refused' : 'error',
        message: e.message,
      }),
    );
    req.end();
  });
}

/** The serving certificate (`--tls-cert-file`) and the kubeconfig's client certificate. */
export async function readCertificates(
  tlsCertFile: string | undefined,
  kc: KubeConfig | undefined,
): Promise<CertificateReading[]> {
  const out: CertificateReading[] = [];
  if (tlsCertFile !== undefined) {
    out.push({
      name: 'serving certificate (--tls-cert-file)',
      path: tlsCertFile,
      pem: await readText(tlsCertFile),
    });
  }
  const user = kc?.getCurrentUser();
  if (user?.certData !== undefined && user.certData !== '') {
    out.push({
      name: 'client certificate (kubeconfig)',
      path: '<client-certificate-data>',
      pem: { ok: true, text: Buffer.from(user.certData, 'base64').toString('utf8') },
    });
  } else if (user?.certFile !== undefined && user.certFile !== '') {
    out.push({
      name: 'client certificate (kubeconfig)',
      path: user.certFile,
      pem: await readText(user.certFile),
    });
  }
  return out;
}

/** The processes holding the socket `inodes`, from `/proc/<pid>/fd` links (`socket:[inode]`). */
export async function socketOwners(
  inodes: ReadonlySet<number>,
  proc = '/proc',
): Promise<Map<number, SocketOwner>> {
  const out = new Map<number, SocketOwner>();
  if (inodes.size === 0) return out;
  let pids: string[];
  try {
    pids = (await readdir(proc)).filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`${proc}/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = await readlink(`${proc}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (!m || !inodes.has(Number(m[1]))) continue;
      const cmd = await readText(`${proc}/${pid}/cmdline`);
      out.set(Number(m[1]), {
        pid: Number(pid),
        cmdline: cmd.ok ? cmd.text.split('\0').filter(Boolean).join(' ') : '?',
      });
    }
    if (out.size === inodes.size) break;
  }
  return out;
}
