/**
 * `nodeagent doctor`'s node checks: small pure functions from readings (file texts, CRI and
 * HTTP answers, statfs numbers) to findings. Nothing here reads the node; see `readers.ts`.
 *
 * @module
 */
import { X509Certificate } from 'node:crypto';
import { isHardEvictionThreshold, type Threshold, thresholdQuantity } from '@nodeagent/eviction';
import type {
  DoctorFinding,
  HttpAnswer,
  ReadResult,
  RuntimeReading,
  SocketOwner,
  StatfsReading,
  TcpListener,
} from './types.js';

/** The kubelet's error when swap is on and `--fail-swap-on` is true (upstream `NewContainerManager`). */
export const SWAP_ON_MESSAGE =
  'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false';

/**
 * Swap against `--fail-swap-on`, as the kubelet decides it (upstream `swap.IsSwapOn`): a
 * missing `/proc/swaps` means off, any other read error is fatal, and swap is on when the
 * trimmed file has more than its header line.
 */
export function checkSwap(procSwaps: ReadResult, failSwapOn: boolean): DoctorFinding[] {
  const subject = '/proc/swaps';
  if (!procSwaps.ok) {
    if (procSwaps.code === 'ENOENT') {
      return [
        {
          check: 'swap',
          severity: 'ok',
          subject,
          message: 'no /proc/swaps: swap is off (the kubelet assumes so too)',
        },
      ];
    }
    return [
      {
        check: 'swap',
        severity: 'error',
        subject,
        message: `cannot read /proc/swaps (${procSwaps.message}): the kubelet fails to start with "failed to determine if swap is on"`,
        remedy:
          'run doctor and the agent as root with /proc mounted (hostPID and a /proc host path in a pod)',
      },
    ];
  }
  const lines = procSwaps.text.trim().split('\n');
  const header = lines[0] ?? '';
  const wellFormed = /^Filename\s+Type\s+Size\s+Used\s+Priority\s*$/.test(header);
  const on = lines.length > 1;
  const devices = lines
    .slice(1)
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((d) => d !== '');
  if (!wellFormed) {
    return [
      {
        check: 'swap',
        severity: 'warn',
        subject,
        message: `/proc/swaps has an unexpected format (first line ${JSON.stringify(header.slice(0, 60))}); the kubelet counts its lines and would take swap as ${on ? 'on' : 'off'}`,
        remedy: 'compare with `swapon --show`; an overlay or a container runtime may be faking /proc/swaps',
      },
    ];
  }
  if (!on) return [{ check: 'swap', severity: 'ok', subject, message: 'swap is off' }];
  if (failSwapOn) {
    return [
      {
        check: 'swap',
        severity: 'error',
        subject,
        message: `swap is on (${devices.join(', ')}) and --fail-swap-on is true: the kubelet refuses to start: "${SWAP_ON_MESSAGE}"`,
        remedy:
          'swapoff -a and remove swap from /etc/fstab (and zram/swap units), or run with --fail-swap-on=false (pods then use swap only with cgroup v2 and memorySwap.swapBehavior=LimitedSwap)',
      },
    ];
  }
  return [
    {
      check: 'swap',
      severity: 'ok',
      subject,
      message: `swap is on (${devices.join(', ')}) and allowed by --fail-swap-on=false`,
    },
  ];
}

/** What the cgroup check reads: `/sys/fs/cgroup/cgroup.controllers` and the `/sys/fs/cgroup` listing. */
export interface CgroupReadings {
  /** `/sys/fs/cgroup/cgroup.controllers` (present only on the unified hierarchy, cgroup v2). */
  readonly controllers: ReadResult;
  /** The names in `/sys/fs/cgroup`, or why it cannot be listed. */
  readonly rootEntries:
    | { readonly ok: true; readonly names: readonly string[] }
    | { readonly ok: false; readonly message: string };
}

/** The cgroup version a node uses, from {@link CgroupReadings}. */
export function cgroupVersion(r: CgroupReadings): 'v1' | 'v2' | 'unknown' {
  if (r.controllers.ok) return 'v2';
  if (
    r.rootEntries.ok &&
    r.rootEntries.names.some((n) => n === 'memory' || n === 'cpu,cpuacct' || n === 'cpu')
  )
    return 'v1';
  return 'unknown';
}

/**
 * The cgroup version (v2 expected; v1 is in maintenance upstream) and the agent's
 * `--cgroup-driver` against the runtime's (CRI `RuntimeConfig`, when the runtime implements
 * it; containerd 1.6 does not, and then the runtime's driver is unknown, not an error).
 */
export function checkCgroups(
  r: CgroupReadings,
  configuredDriver: 'systemd' | 'cgroupfs' | undefined,
  runtime: RuntimeReading | undefined,
): DoctorFinding[] {
  const out: DoctorFinding[] = [];
  const version = cgroupVersion(r);
  const controllers = r.controllers.ok ? r.controllers.text.trim().split(/\s+/).filter(Boolean) : [];
  if (version === 'v2') {
    const missing = ['cpu', 'memory', 'pids'].filter((c) => !controllers.includes(c));
    out.push(
      missing.length === 0
        ? {
            check: 'cgroups',
            severity: 'ok',
            subject: '/sys/fs/cgroup',
            message: `cgroup v2 (controllers: ${controllers.join(' ')})`,
          }
        : {
            check: 'cgroups',
            severity: 'warn',
            subject: '/sys/fs/cgroup',
            message: `cgroup v2 without the ${missing.join(', ')} controller(s): pod limits on them are not enforced`,
            remedy:
              'enable them on the kernel command line (e.g. cgroup_enable=memory) or delegate them to this cgroup',
          },
    );
  } else if (version === 'v1') {
    out.push({
      check: 'cgroups',
      severity: 'warn',
      subject: '/sys/fs/cgroup',
      message:
        'cgroup v1: in maintenance mode upstream since Kubernetes 1.31; recent kubelets refuse it unless failCgroupV1 is false',
      remedy: 'boot with systemd.unified_cgroup_hierarchy=1 (cgroup v2)',
    });
  } else {
    out.push({
      check: 'cgroups',
      severity: 'error',
      subject: '/sys/fs/cgroup',
      message: `no cgroup filesystem recognised at /sys/fs/cgroup (${r.rootEntries.ok ? `entries: ${r.rootEntries.names.slice(0, 8).join(', ') || 'none'}` : r.rootEntries.message})`,
      remedy:
        'mount cgroup2 on /sys/fs/cgroup (mount -t cgroup2 none /sys/fs/cgroup); in a pod, mount the host /sys/fs/cgroup',
    });
  }
  const mine = configuredDriver ?? 'cgroupfs';
  const how = configuredDriver === undefined ? 'the default' : '--cgroup-driver';
  if (runtime === undefined) {
    out.push({
      check: 'cgroups',
      severity: 'ok',
      skipped: true,
      subject: 'cgroup driver',
      message: `the agent uses ${mine} (${how}); the runtime's driver was not asked (no --container-runtime-endpoint)`,
    });
  } else if (runtime.cgroupDriver === undefined || !runtime.cgroupDriver.ok) {
    const why =
      runtime.cgroupDriver === undefined
        ? 'the runtime did not answer'
        : runtime.cgroupDriver.reason === 'unimplemented'
          ? 'the runtime does not implement RuntimeConfig (containerd before 2.0)'
          : `RuntimeConfig failed: ${runtime.cgroupDriver.message}`;
    out.push({
      check: 'cgroups',
      severity: 'ok',
      skipped: true,
      subject: 'cgroup driver',
      message: `the agent uses ${mine} (${how}); the runtime's driver is unknown: ${why}`,
      remedy: `make sure the runtime uses ${mine} too (containerd: SystemdCgroup = ${mine === 'systemd'} in the runc options)`,
    });
  } else if (runtime.cgroupDriver.driver !== mine) {
    out.push({
      check: 'cgroups',
      severity: 'error',
      subject: 'cgroup driver',
      message: `the agent uses cgroup driver ${mine} (${how}) but the runtime uses ${runtime.cgroupDriver.driver}: pod cgroups are created where the runtime does not put the containers`,
      remedy: `run the agent with --cgroup-driver=${runtime.cgroupDriver.driver} (or change the runtime's: containerd SystemdCgroup = ${mine === 'systemd'})`,
    });
  } else {
    out.push({
      check: 'cgroups',
      severity: 'ok',
      subject: 'cgroup driver',
      message: `the agent and the runtime both use the ${mine} cgroup driver`,
    });
  }
  return out;
}

/** upstream `RuntimeCondition.String()`: `Type=bool reason:R message:M`. */
function conditionText(c: { type: string; status: boolean; reason: string; message: string }): string {
  return `${c.type}=${c.status} reason:${c.reason} message:${c.message}`;
}

/**
 * The runtime's reachability (`Version` within the timeout) and its `Status` conditions:
 * `RuntimeReady` and `NetworkReady` must be present and true, as the kubelet's
 * `updateRuntimeUp` requires before it reports the node Ready.
 */
export function checkRuntime(r: RuntimeReading | undefined): DoctorFinding[] {
  if (r === undefined) {
    return [
      {
        check: 'runtime',
        severity: 'ok',
        skipped: true,
        message:
          'no --container-runtime-endpoint: the agent runs its in-process fake runtime, which doctor cannot reach',
      },
    ];
  }
  const subject = r.endpoint;
  if (!r.version.ok) {
    const v = r.version;
    return [
      {
        check: 'runtime',
        severity: 'error',
        subject,
        message:
          v.reason === 'timeout'
            ? `the container runtime at ${r.endpoint} did not answer Version in time (${v.message}): it is hung or overloaded; the kubelet reports "container runtime is down"`
            : `cannot reach the container runtime at ${r.endpoint}: ${v.message}`,
        remedy:
          v.reason === 'timeout'
            ? 'look at the runtime (systemctl status containerd; journalctl -u containerd) and restart it if it stays hung'
            : 'start the runtime (systemctl start containerd) or fix --container-runtime-endpoint',
      },
    ];
  }
  const out: DoctorFinding[] = [
    {
      check: 'runtime',
      severity: 'ok',
      subject,
      message: `${r.version.runtimeName} ${r.version.runtimeVersion} answers (CRI ${r.version.runtimeApiVersion})`,
    },
  ];
  if (r.status === undefined) return out;
  if (!r.status.ok) {
    out.push({
      check: 'runtime',
      severity: 'error',
      subject,
      message: `the runtime's Status failed (${r.status.reason}): ${r.status.message}; the kubelet reports "container runtime is down"`,
      remedy: 'look at the runtime (journalctl -u containerd) and restart it',
    });
    return out;
  }
  const conditions = r.status.conditions;
  for (const type of ['RuntimeReady', 'NetworkReady']) {
    const c = conditions.find((x) => x.type === type);
    if (c?.status === true) {
      out.push({ check: 'runtime', severity: 'ok', subject: type, message: `${type}=true` });
      continue;
    }
    const text = c === undefined ? '<nil>' : conditionText(c);
    out.push(
      type === 'RuntimeReady'
        ? {
            check: 'runtime',
            severity: 'error',
            subject: type,
            message: `container runtime not ready: ${text}`,
            remedy: 'look at the runtime (journalctl -u containerd); restart it',
          }
        : {
            check: 'runtime',
            severity: 'error',
            subject: type,
            message: `container runtime network not ready: ${text}`,
            remedy:
              'install a CNI plugin and its configuration in /etc/cni/net.d (binaries in /opt/cni/bin), or start the network add-on; then the runtime reports NetworkReady',
          },
    );
  }
  return out;
}

/** The kubelet's PLEG health threshold (`genericPlegRelistThreshold`, 3 min). */
export const PLEG_RELIST_THRESHOLD_SECONDS = 180;
/** The generic PLEG's relist period (1 s): a mean relist longer than this makes every event late. */
export const PLEG_RELIST_PERIOD_SECONDS = 1;

/** The value of an unlabelled sample `name` in a Prometheus text exposition. */
export function metricValue(text: string, name: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m?.[1] === name) {
      const v = Number(m[3]);
      if (Number.isFinite(v)) return v;
    }
  }
  return undefined;
}

/**
 * PLEG health from the running agent's `/healthz?verbose` (the `pleg` check) and, when a
 * metrics URL answers, relist latency from `kubelet_pleg_relist_duration_seconds` (mean,
 * warn above the 1 s relist period) and `kubelet_pleg_last_seen_seconds` (error when older
 * than the 3 min threshold).
 */
export function checkPleg(
  healthzUrl: string | undefined,
  healthz: HttpAnswer | undefined,
  metricsUrl: string | undefined,
  metrics: HttpAnswer | undefined,
  nowMs: number,
): DoctorFinding[] {
  if (healthzUrl === undefined || healthz === undefined) {
    return [
      {
        check: 'pleg',
        severity: 'ok',
        skipped: true,
        message: 'healthz is off (--healthz-port=0): PLEG health not checked',
      },
    ];
  }
  if (!healthz.ok) {
    return [
      healthz.reason === 'timeout'
        ? {
            check: 'pleg',
            severity: 'error',
            subject: healthzUrl,
            message: `the agent's healthz did not answer in time (${healthz.message}): the agent is hung`,
            remedy: 'look at the agent logs; restart it',
          }
        : {
            check: 'pleg',
            severity: 'warn',
            subject: healthzUrl,
            message: `the agent is not running (nothing answers ${healthzUrl}: ${healthz.message}); PLEG not checked and the node goes NotReady once its lease expires`,
            remedy: 'start the agent (systemctl start nodeagent) or give doctor its --healthz-port',
          },
    ];
  }
  const out: DoctorFinding[] = [];
  const lines = healthz.body.split('\n');
  const pleg = lines.find((l) => /^\[[+-]\]pleg\b/.test(l));
  if (healthz.status === 200) {
    out.push({
      check: 'pleg',
      severity: 'ok',
      subject: healthzUrl,
      message: `PLEG is healthy (${pleg ?? 'healthz ok'})`,
    });
  } else {
    const failed = /^\[-\]pleg failed: ?(.*)$/.exec(pleg ?? '');
    if (failed) {
      out.push({
        check: 'pleg',
        severity: 'error',
        subject: healthzUrl,
        message: `PLEG is not healthy: ${failed[1]}`,
        remedy:
          'the runtime is slow or hung (a relist has not finished in 3 min): check crictl ps / crictl pods latency, dead shims, disk I/O stalls and the number of containers; restart the runtime if it stays stuck',
      });
    } else {
      out.push({ check: 'pleg', severity: 'ok', subject: healthzUrl, message: 'PLEG is healthy (healthz)' });
    }
    for (const l of lines) {
      const m = /^\[-\]([\w-]+) failed: ?(.*)$/.exec(l);
      if (m && m[1] !== 'pleg') {
        out.push({
          check: 'pleg',
          severity: 'error',
          subject: `healthz ${m[1]}`,
          message: `the agent's ${m[1]} health check fails: ${m[2]}`,
          remedy: 'look at the agent logs around this time',
        });
      }
    }
    if (!lines.some((l) => l.startsWith('[-]'))) {
      out.push({
        check: 'pleg',
        severity: 'error',
        subject: healthzUrl,
        message: `healthz answered ${healthz.status}: ${healthz.body.trim().slice(0, 200)}`,
        remedy: 'look at the agent logs',
      });
    }
  }
  if (metricsUrl === undefined || metrics === undefined) {
    out.push({
      check: 'pleg',
      severity: 'ok',
      skipped: true,
      message: 'relist latency not read: no metrics endpoint (enable --read-only-port to expose /metrics)',
    });
    return out;
  }
  if (!metrics.ok || metrics.status !== 200) {
    out.push({
      check: 'pleg',
      severity: 'ok',
      skipped: true,
      subject: metricsUrl,
      message: `relist latency not read: ${metrics.ok ? `${metricsUrl} answered ${metrics.status}` : metrics.message}`,
    });
    return out;
  }
  const sum = metricValue(metrics.body, 'kubelet_pleg_relist_duration_seconds_sum');
  const count = metricValue(metrics.body, 'kubelet_pleg_relist_duration_seconds_count');
  const lastSeen = metricValue(metrics.body, 'kubelet_pleg_last_seen_seconds');
  if (sum === undefined || count === undefined || count === 0) {
    out.push({
      check: 'pleg',
      severity: 'ok',
      skipped: true,
      subject: metricsUrl,
      message: 'relist latency not read: no kubelet_pleg_relist_duration_seconds samples in /metrics',
    });
  } else {
    const mean = sum / count;
    out.push(
      mean > PLEG_RELIST_PERIOD_SECONDS
        ? {
            check: 'pleg',
            severity: 'warn',
            subject: 'kubelet_pleg_relist_duration_seconds',
            message: `mean PLEG relist takes ${mean.toFixed(3)} s over ${count} relists, longer than the 1 s relist period: container events arrive late`,
            remedy:
              'the runtime answers ListPodSandbox/ListContainers slowly: fewer containers, faster disk, a healthier runtime',
          }
        : {
            check: 'pleg',
            severity: 'ok',
            subject: 'kubelet_pleg_relist_duration_seconds',
            message: `mean PLEG relist takes ${mean.toFixed(3)} s over ${count} relists`,
          },
    );
  }
  if (lastSeen !== undefined) {
    const age = nowMs / 1000 - lastSeen;
    if (age > PLEG_RELIST_THRESHOLD_SECONDS) {
      out.push({
        check: 'pleg',
        severity: 'error',
        subject: 'kubelet_pleg_last_seen_seconds',
        message: `PLEG was last seen active ${Math.round(age)} s ago; threshold is ${PLEG_RELIST_THRESHOLD_SECONDS} s`,
        remedy: 'the runtime is hung: restart it; see "PLEG is not healthy" in the README',
      });
    }
  }
  return out;
}

/** Clock skew above this is a warning, ms (the API server's `Date` has 1 s resolution). */
export const CLOCK_SKEW_WARN_MS = 1_000;
/** Clock skew above this is an error, ms (credentials' validity windows start failing). */
export const CLOCK_SKEW_ERROR_MS = 60_000;

/** A request to the API server timed on the local clock. */
export type ApiServerDateReading =
  | {
      readonly ok: true;
      /** The server asked. */
      readonly server: string;
      /** The `Date` response header. */
      readonly date: string | undefined;
      /** Local clock when the request was sent, ms since the epoch. */
      readonly sentAtMs: number;
      /** Local clock when the answer arrived. */
      readonly receivedAtMs: number;
    }
  | {
      readonly ok: false;
      readonly server: string;
      readonly reason: 'timeout' | 'refused' | 'error';
      readonly message: string;
    };

/**
 * Clock skew to the API server from its `Date` header. The header is truncated to the
 * second, so the server's time at the answer lies in `[Date, Date + 1 s)` and the local time in
 * `[sent, received]`: the skew counted is the smallest one consistent with both. Warn above
 * {@link CLOCK_SKEW_WARN_MS}, error above {@link CLOCK_SKEW_ERROR_MS}.
 */
export function checkClockSkew(r: ApiServerDateReading | undefined): DoctorFinding[] {
  if (r === undefined) {
    return [
      {
        check: 'clock-skew',
        severity: 'ok',
        skipped: true,
        message: 'no --kubeconfig and not in a cluster: clock skew to the API server not checked',
      },
    ];
  }
  if (!r.ok) {
    return [
      {
        check: 'clock-skew',
        severity: 'error',
        subject: r.server,
        message: `cannot reach the API server ${r.server} (${r.reason}: ${r.message}): the node cannot renew its lease or report status and goes NotReady`,
        remedy:
          'check the server address in the kubeconfig, DNS, routes and firewalls to it, and its certificate authority',
      },
    ];
  }
  const serverMs = r.date === undefined ? Number.NaN : Date.parse(r.date);
  if (!Number.isFinite(serverMs)) {
    return [
      {
        check: 'clock-skew',
        severity: 'warn',
        subject: r.server,
        message: `the API server's answer has ${r.date === undefined ? 'no Date header' : `an unreadable Date header ${JSON.stringify(r.date)}`}: clock skew not checked`,
        remedy: 'compare the clocks by hand (date -u on both machines)',
      },
    ];
  }
  // server - local lies in [serverMs - received, serverMs + 1000 - sent].
  const low = serverMs - r.receivedAtMs;
  const high = serverMs + 1000 - r.sentAtMs;
  const skew = low > 0 ? low : Math.min(high, 0);
  const abs = Math.abs(skew);
  const text = `the local clock is ${abs === 0 ? 'within 1 s of' : `${(abs / 1000).toFixed(1)} s ${skew > 0 ? 'behind' : 'ahead of'}`} the API server's`;
  if (abs > CLOCK_SKEW_WARN_MS) {
    return [
      {
        check: 'clock-skew',
        severity: abs > CLOCK_SKEW_ERROR_MS ? 'error' : 'warn',
        subject: r.server,
        message: `${text}: certificates and tokens can be "not yet valid" or expired early, and logs and events disagree`,
        remedy:
          'run time synchronisation on every node and the control plane (chronyd or systemd-timesyncd; timedatectl status)',
      },
    ];
  }
  return [{ check: 'clock-skew', severity: 'ok', subject: r.server, message: text }];
}

/** Certificates expiring sooner than this are a warning, ms (30 days). */
export const CERT_WARN_MS = 30 * 24 * 3600 * 1000;

/** A certificate to check: where it comes from and its PEM (or why it could not be read). */
export interface CertificateReading {
  /** What it is (`serving certificate (--tls-cert-file)`, `client certificate (kubeconfig)`). */
  readonly name: string;
  /** Its file, or `<inline>` for kubeconfig data. */
  readonly path: string;
  /** The PEM text. */
  readonly pem: ReadResult;
}

/**
 * Certificates: expired or not yet valid is an error, expiring within
 * {@link CERT_WARN_MS} (30 days) a warning. `certs` empty: nothing configured to check.
 */
export function checkCertificates(
  certs: readonly CertificateReading[],
  nowMs: number,
  why?: string,
): DoctorFinding[] {
  if (certs.length === 0) {
    return [
      {
        check: 'certificates',
        severity: 'ok',
        skipped: true,
        message:
          why ??
          'no certificate files configured (no --tls-cert-file, no client certificate in the kubeconfig)',
      },
    ];
  }
  const out: DoctorFinding[] = [];
  for (const c of certs) {
    const subject = `${c.name}: ${c.path}`;
    if (!c.pem.ok) {
      out.push({
        check: 'certificates',
        severity: 'error',
        subject,
        message: `cannot read the ${c.name} ${c.path}: ${c.pem.message}`,
        remedy: 'fix the path or the file permissions',
      });
      continue;
    }
    let cert: X509Certificate;
    try {
      const first = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(c.pem.text)?.[0];
      if (first === undefined) throw new Error('no PEM CERTIFICATE block');
      cert = new X509Certificate(first);
    } catch (e) {
      out.push({
        check: 'certificates',
        severity: 'error',
        subject,
        message: `the ${c.name} ${c.path} is not a readable certificate: ${(e as Error).message}`,
        remedy: 'replace it with a PEM certificate',
      });
      continue;
    }
    const notAfter = Date.parse(cert.validTo);
    const notBefore = Date.parse(cert.validFrom);
    const days = (ms: number) => `${Math.floor(Math.abs(ms) / 86_400_000)} day(s)`;
    const who = `the ${c.name} (${cert.subject.replace(/\n/g, ', ')})`;
    if (notAfter <= nowMs) {
      out.push({
        check: 'certificates',
        severity: 'error',
        subject,
        message: `${who} expired ${days(nowMs - notAfter)} ago (${cert.validTo}): "x509: certificate has expired or is not yet valid"`,
        remedy: c.name.startsWith('client')
          ? 'renew it (kubeadm certs renew, or rotate with --rotate-certificates and a fresh bootstrap token)'
          : 'renew the serving certificate (or drop --tls-cert-file to use a self-signed one)',
      });
    } else if (notBefore > nowMs) {
      out.push({
        check: 'certificates',
        severity: 'error',
        subject,
        message: `${who} is not valid before ${cert.validFrom}: the clock is behind or the certificate is from the future`,
        remedy: 'fix the clock (see clock-skew) or reissue the certificate',
      });
    } else if (notAfter - nowMs < CERT_WARN_MS) {
      out.push({
        check: 'certificates',
        severity: 'warn',
        subject,
        message: `${who} expires in ${days(notAfter - nowMs)} (${cert.validTo})`,
        remedy: 'renew it before it expires',
      });
    } else {
      out.push({
        check: 'certificates',
        severity: 'ok',
        subject,
        message: `${who} is valid for ${days(notAfter - nowMs)} more`,
      });
    }
  }
  return out;
}

/**
 * The listening sockets of a `/proc/net/tcp` or `/proc/net/tcp6` text (state `0A`); lines
 * that do not parse are skipped.
 */
export function parseProcNetTcp(text: string): TcpListener[] {
  const out: TcpListener[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    if (f.length < 10 || f[3] !== '0A') continue;
    const m = /^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/.exec(f[1] ?? '');
    const inode = Number(f[9]);
    if (!m || !Number.isInteger(inode)) continue;
    out.push({ address: hexAddress(m[1]!), port: Number.parseInt(m[2]!, 16), inode });
  }
  return out;
}

/** `/proc/net/tcp` addresses are 32-bit words in host (little-endian) order. */
function hexAddress(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) =>
    [w.slice(6, 8), w.slice(4, 6), w.slice(2, 4), w.slice(0, 2)].map((b) => Number.parseInt(b, 16)),
  );
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  const full = groups.join(':');
  if (full === '0:0:0:0:0:0:0:0') return '::';
  if (full === '0:0:0:0:0:0:0:1') return '::1';
  return full;
}

/** A port the agent (or its data plane) needs. */
export interface PortSpec {
  /** The port. */
  readonly port: number;
  /** What uses it (`--port (kubelet API)`). */
  readonly purpose: string;
  /** Who is expected to hold it: a command-line pattern. */
  readonly expectedOwner: RegExp;
  /** Who that is, for messages (`the agent`, `the proxy`). */
  readonly expectedName: string;
}

/**
 * Ports: for each needed port, who listens on it. Free or held by the expected owner (the
 * agent, or the proxy for 10256) is fine; another process is an error (the agent cannot
 * listen); an owner doctor cannot see (another network namespace, no permission) a warning.
 */
export function checkPorts(
  ports: readonly PortSpec[],
  listeners:
    | { readonly ok: true; readonly list: readonly TcpListener[] }
    | { readonly ok: false; readonly message: string },
  owners: ReadonlyMap<number, SocketOwner>,
  selfPid: number,
): DoctorFinding[] {
  if (!listeners.ok) {
    return [
      {
        check: 'ports',
        severity: 'warn',
        message: `cannot read the listening sockets (${listeners.message}): ports not checked`,
        remedy: 'ss -ltnp to see who listens on 10250/10255/10248/10256',
      },
    ];
  }
  const out: DoctorFinding[] = [];
  for (const p of ports) {
    const subject = `${p.port} ${p.purpose}`;
    const on = listeners.list.filter((l) => l.port === p.port);
    if (on.length === 0) {
      out.push({ check: 'ports', severity: 'ok', subject, message: `port ${p.port} (${p.purpose}) is free` });
      continue;
    }
    const held = on.map((l) => ({ l, owner: owners.get(l.inode) }));
    const strangers = held.filter(
      (h) => h.owner !== undefined && h.owner.pid !== selfPid && !p.expectedOwner.test(h.owner.cmdline),
    );
    const unknown = held.filter((h) => h.owner === undefined);
    const describe = (h: { l: TcpListener; owner: SocketOwner | undefined }) =>
      h.owner === undefined
        ? `${h.l.address}:${h.l.port}`
        : `pid ${h.owner.pid} (${h.owner.cmdline.slice(0, 80)}) on ${h.l.address}`;
    if (strangers.length > 0) {
      out.push({
        check: 'ports',
        severity: 'error',
        subject,
        message: `port ${p.port} (${p.purpose}) is taken by ${strangers.map(describe).join(', ')}: ${p.expectedName} cannot listen there`,
        remedy: `stop that process (another kubelet or agent: systemctl stop kubelet) or move ${p.expectedName} to another port`,
      });
    } else if (unknown.length > 0) {
      out.push({
        check: 'ports',
        severity: 'warn',
        subject,
        message: `port ${p.port} (${p.purpose}) is taken by a process doctor cannot see (${unknown.map(describe).join(', ')})`,
        remedy: `ss -ltnp 'sport = :${p.port}' as root shows who`,
      });
    } else {
      out.push({
        check: 'ports',
        severity: 'ok',
        subject,
        message: `port ${p.port} (${p.purpose}) is held by ${p.expectedName}: ${held.map(describe).join(', ')}`,
      });
    }
  }
  return out;
}

/** A filesystem the eviction signals watch. */
export interface FsReading {
  /** `nodefs` (the root dir's) or `imagefs` (the runtime's image filesystem). */
  readonly kind: 'nodefs' | 'imagefs';
  /** The path measured. */
  readonly path: string;
  /** Its statfs. */
  readonly stat: StatfsReading;
}

/** Disk and inode availability within this factor of a hard threshold is a warning. */
export const DISK_WARN_FACTOR = 1.5;

function bytes(n: bigint): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n);
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)}${units[i]}`;
}

/**
 * Disk and inode pressure: `nodefs.available`, `nodefs.inodesFree`, `imagefs.available` and
 * `imagefs.inodesFree` measured by statfs against the agent's hard eviction thresholds
 * (`--eviction-hard`, the kubelet's defaults when not given). Below a threshold is an error
 * (the node reports DiskPressure and evicts pods); within {@link DISK_WARN_FACTOR}× of it a warning.
 */
export function checkDisk(fs: readonly FsReading[], thresholds: readonly Threshold[]): DoctorFinding[] {
  const out: DoctorFinding[] = [];
  for (const f of fs) {
    if (!f.stat.ok) {
      out.push({
        check: 'disk',
        severity: 'error',
        subject: `${f.kind} ${f.path}`,
        message: `cannot statfs the ${f.kind} ${f.path}: ${f.stat.message}`,
        remedy:
          f.stat.code === 'ENOENT'
            ? 'create the directory or fix --root-dir'
            : 'check the path and permissions',
      });
      continue;
    }
    const s = f.stat;
    const measures = [
      {
        signal: `${f.kind}.available`,
        capacity: BigInt(s.blocks) * BigInt(s.bsize),
        available: BigInt(s.bavail) * BigInt(s.bsize),
        show: bytes,
        what: 'disk space',
      },
      {
        signal: `${f.kind}.inodesFree`,
        capacity: BigInt(s.files),
        available: BigInt(s.ffree),
        show: (n: bigint) => `${n} inodes`,
        what: 'inodes',
      },
    ];
    for (const m of measures) {
      const subject = `${m.signal} ${f.path}`;
      const ts = thresholds.filter((t) => t.signal === m.signal && isHardEvictionThreshold(t));
      if (m.signal.endsWith('inodesFree') && m.capacity === 0n) {
        out.push({
          check: 'disk',
          severity: 'ok',
          subject,
          message: `${m.signal}: ${f.path} has no inode limit`,
        });
        continue;
      }
      if (ts.length === 0) {
        out.push({
          check: 'disk',
          severity: 'ok',
          subject,
          message: `${m.signal}: ${m.show(m.available)} of ${m.show(m.capacity)} free on ${f.path}; no hard threshold`,
        });
        continue;
      }
      let limit = 0n;
      for (const t of ts) {
        const q = thresholdQuantity(t.value, m.capacity);
        if (q > limit) limit = q;
      }
      const free =
        m.what === 'inodes'
          ? `${m.signal}: ${m.available} of ${m.capacity} inodes free on ${f.path}`
          : `${m.signal}: ${m.show(m.available)} of ${m.show(m.capacity)} free on ${f.path}`;
      if (m.available < limit) {
        out.push({
          check: 'disk',
          severity: 'error',
          subject,
          message: `${free}: below the ${m.signal} hard eviction threshold (${m.show(limit)}): the node reports DiskPressure and evicts pods`,
          remedy: `free ${m.what} on ${f.path} (crictl rmi --prune, remove old logs), or lower --eviction-hard ${m.signal}`,
        });
      } else if (Number(m.available) < Number(limit) * DISK_WARN_FACTOR) {
        out.push({
          check: 'disk',
          severity: 'warn',
          subject,
          message: `${free}: close to the ${m.signal} hard eviction threshold (${m.show(limit)})`,
          remedy: `free ${m.what} on ${f.path} before the node reports DiskPressure`,
        });
      } else {
        out.push({ check: 'disk', severity: 'ok', subject, message: `${free} (threshold ${m.show(limit)})` });
      }
    }
  }
  return out;
}

/** A data-plane doctor finding (as `@nodeagent/proxier` reports it). */
export interface DataPlaneFindingReading {
  /** Its id. */
  readonly id: string;
  /** `error`, `warning` or `info`. */
  readonly severity: 'error' | 'warning' | 'info';
  /** Its message. */
  readonly message: string;
  /** Its remedy. */
  readonly remedy?: string;
  /** Its subject. */
  readonly subject?: string;
}

/**
 * The data-plane doctor's findings folded in: `error` stays `error`, `warning` becomes
 * `warn`, `info` becomes `ok`; a failure to run it is a warning.
 */
export function checkDataPlane(
  r:
    | {
        readonly ok: true;
        readonly modes: readonly string[];
        readonly findings: readonly DataPlaneFindingReading[];
      }
    | { readonly ok: false; readonly message: string },
): DoctorFinding[] {
  if (!r.ok) {
    return [
      {
        check: 'data-plane',
        severity: 'warn',
        message: `the data-plane doctor failed: ${r.message}`,
        remedy: 'run nodeagent-proxy doctor directly to see why',
      },
    ];
  }
  const out: DoctorFinding[] = [
    {
      check: 'data-plane',
      severity: 'ok',
      message: `proxy modes with rules on this node: ${r.modes.length > 0 ? r.modes.join(', ') : '(none)'}`,
    },
  ];
  for (const f of r.findings) {
    out.push({
      check: 'data-plane',
      severity: f.severity === 'warning' ? 'warn' : f.severity === 'info' ? 'ok' : 'error',
      id: f.id,
      message: f.message,
      ...(f.remedy !== undefined ? { remedy: f.remedy } : {}),
      ...(f.subject !== undefined ? { subject: f.subject } : {}),
    });
  }
  return out;
}
