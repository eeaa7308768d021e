/**
 * `nodeagent doctor`'s vocabulary: the checks, their findings and the readings the checks
 * are computed from (so unit tests hand in fake `/proc`, `/sys/fs/cgroup`, CRI and HTTP
 * answers).
 *
 * @module
 */

/** How bad a finding is: `warn` and `error` are problems (exit code 1); `ok` is not. */
export type DoctorSeverity = 'ok' | 'warn' | 'error';

/** The checks, in the order the report lists them. */
export const DOCTOR_CHECKS = [
  'swap',
  'cgroups',
  'runtime',
  'pleg',
  'clock-skew',
  'certificates',
  'ports',
  'disk',
  'data-plane',
] as const;

/** One of {@link DOCTOR_CHECKS}. */
export type DoctorCheck = (typeof DOCTOR_CHECKS)[number];

/** One thing doctor found. */
export interface DoctorFinding {
  /** The check that made it. */
  readonly check: DoctorCheck;
  /** How bad it is. */
  readonly severity: DoctorSeverity;
  /** What was found, one line. */
  readonly message: string;
  /** What to do about it (absent when nothing is to be done). */
  readonly remedy?: string;
  /** The object concerned (a file, port, filesystem, condition), when there is one. */
  readonly subject?: string;
  /** The check could not run or does not apply here (the message says why). */
  readonly skipped?: true;
  /** For `data-plane`: the data-plane doctor's own finding id (`mixed-modes`, `ip-forward`, ...). */
  readonly id?: string;
}

/** A file read: its text, or the error code (`ENOENT`, `EACCES`, ...) and message. */
export type ReadResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** An HTTP answer, or why there was none. */
export type HttpAnswer =
  | {
      readonly ok: true;
      /** Status code. */
      readonly status: number;
      /** Body text. */
      readonly body: string;
      /** The `Date` response header, when sent. */
      readonly date?: string;
    }
  | {
      readonly ok: false;
      /** `refused`: nothing listens; `timeout`: no answer in time; `error`: anything else. */
      readonly reason: 'refused' | 'timeout' | 'error';
      /** The error text. */
      readonly message: string;
    };

/** A failed or timed-out remote call. */
export interface CallFailure {
  /** `false`. */
  readonly ok: false;
  /** `timeout`: no answer within the doctor's timeout; `unavailable`: cannot connect; `unimplemented`: the RPC is not implemented; `error`: anything else. */
  readonly reason: 'timeout' | 'unavailable' | 'unimplemented' | 'error';
  /** The error text. */
  readonly message: string;
}

/** A runtime condition as CRI `Status` reports it. */
export interface RuntimeConditionReading {
  /** `RuntimeReady`, `NetworkReady`, or another. */
  readonly type: string;
  /** Whether it holds. */
  readonly status: boolean;
  /** Machine-readable reason. */
  readonly reason: string;
  /** Human message. */
  readonly message: string;
}

/** What the CRI runtime answered. */
export interface RuntimeReading {
  /** The endpoint asked. */
  readonly endpoint: string;
  /** `Version`. */
  readonly version:
    | {
        readonly ok: true;
        readonly runtimeName: string;
        readonly runtimeVersion: string;
        readonly runtimeApiVersion: string;
      }
    | CallFailure;
  /** `Status` (absent when `Version` failed). */
  readonly status?:
    | { readonly ok: true; readonly conditions: readonly RuntimeConditionReading[] }
    | CallFailure;
  /** `RuntimeConfig`'s `linux.cgroup_driver` (absent when `Version` failed). */
  readonly cgroupDriver?: { readonly ok: true; readonly driver: 'systemd' | 'cgroupfs' } | CallFailure;
  /** `ImageFsInfo`'s first image filesystem mount point (absent when unknown). */
  readonly imageFsMountpoint?: string;
}

/** `statfs` of a path, or why it failed. */
export type StatfsReading =
  | {
      readonly ok: true;
      /** Block size, bytes. */
      readonly bsize: number;
      /** Total blocks. */
      readonly blocks: number;
      /** Blocks available to unprivileged users. */
      readonly bavail: number;
      /** Total inodes (0: the filesystem has no inode limit). */
      readonly files: number;
      /** Free inodes. */
      readonly ffree: number;
    }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** A listening TCP socket from `/proc/net/tcp` / `tcp6`. */
export interface TcpListener {
  /** Local address (`0.0.0.0`, `127.0.0.1`, `::`, ...). */
  readonly address: string;
  /** Local port. */
  readonly port: number;
  /** Socket inode (finds the owning process through `/proc/<pid>/fd`). */
  readonly inode: number;
}

/** The process holding a socket. */
export interface SocketOwner {
  /** Its PID. */
  readonly pid: number;
  /** Its command line, arguments joined by spaces. */
  readonly cmdline: string;
}
