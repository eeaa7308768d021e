// The commands, configs and polling helpers the CRI contract uses. The fake runtime's
// contract run scripts behaviours for exactly these commands, so they live in one place.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PartialMessage } from '../../src/call-options.js';
import {
  type ContainerConfig,
  ContainerState,
  type ContainerStatus,
  type CriClient,
  type PodSandboxConfig,
} from '../../src/index.js';

/** Container commands whose behaviour the contract asserts (real shells on containerd, scripted on the fake). */
export const CONTRACT_COMMANDS = {
  /** Runs until killed; as PID 1 without a handler it ignores SIGTERM, so stop it with timeout 0. */
  sleep: ['sleep', '1000'],
  /** Exits on its own with code 3. */
  exit3: ['sh', '-c', 'exit 3'],
  /** Exits on its own with code 0. */
  exit0: ['sh', '-c', 'exit 0'],
  /** Ignores SIGTERM: StopContainer only ends it at the timeout, with SIGKILL (137). */
  ignoreTerm: ['sh', '-c', 'trap "" TERM; sleep 1000'],
  /** Handles SIGTERM by exiting 0 (within a second: the trap runs after the current `sleep 1`). */
  graceful: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
} as const;

/** ExecSync commands the contract runs, with the output a real shell gives. */
export const CONTRACT_EXEC = {
  argv: ['sh', '-c', 'echo out; echo err >&2; exit 7'],
  stdout: 'out\n',
  stderr: 'err\n',
  exitCode: 7,
} as const;

/** A reference no registry can serve (`.invalid` never resolves; no traffic leaves the test netns). */
export const MISSING_IMAGE = 'registry.invalid/nodeagent/does-not-exist:0.0';

/** A unique name per run, so reruns against a long-lived runtime never collide. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A pod sandbox config as the kubelet would send it (log directory created when it is on this host). */
export async function contractPodConfig(
  name: string,
  logRoot: string | undefined,
  labels: Readonly<Record<string, string>> = {},
  cgroupParent = '',
): Promise<PartialMessage<PodSandboxConfig>> {
  const uid = `${name}-uid`;
  const logDirectory = join(logRoot ?? '/var/log/pods', `contract_${name}_${uid}`);
  if (logRoot !== undefined) await mkdir(logDirectory, { recursive: true });
  return {
    metadata: { name, namespace: 'contract', uid, attempt: 0 },
    hostname: name,
    logDirectory,
    labels: { 'nodeagent.test/contract': 'true', ...labels },
    annotations: { 'nodeagent.test/pod': name },
    linux: { cgroupParent },
  };
}

/** A container config running `argv` from `image`. */
export function contractContainerConfig(
  name: string,
  image: string,
  argv: readonly string[],
  labels: Readonly<Record<string, string>> = {},
): PartialMessage<ContainerConfig> {
  return {
    metadata: { name, attempt: 0 },
    image: { image },
    command: [...argv],
    labels: { 'nodeagent.test/container': name, ...labels },
    annotations: { 'nodeagent.test/container': name },
    logPath: `${name}.log`,
    linux: {},
  };
}

/** Polls ContainerStatus (real time) until `done(status)`; returns the last status. */
export async function waitForContainer(
  cri: CriClient,
  containerId: string,
  done: (s: ContainerStatus) => boolean,
  maxMs = 15_000,
): Promise<ContainerStatus> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const { status } = await cri.runtime.containerStatus({ containerId });
    if (status === undefined) throw new Error(`ContainerStatus of ${containerId} has no status`);
    if (done(status)) return status;
    if (Date.now() > deadline) {
      throw new Error(`container ${containerId} still ${ContainerState[status.state]} after ${maxMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether `ip` lies in the IPv4 `cidr`. */
export function ipInCidr(ip: string, cidr: string): boolean {
  const toInt = (a: string) => a.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const [base, bitsText] = cidr.split('/');
  const size = 2 ** (32 - Number(bitsText));
  const start = toInt(base ?? '') - (toInt(base ?? '') % size);
  const value = toInt(ip);
  return /^\d+\.\d+\.\d+\.\d+$/.test(ip) && value >= start && value < start + size;
}
