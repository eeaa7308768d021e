/**
 * Reads an exited container's termination message for its status (upstream
 * `getTerminationMessage`, `readLastStringFromContainerLogs`): the file mounted at
 * `terminationMessagePath` (at most 4096 bytes), or with `FallbackToLogsOnError` and a
 * non-zero exit and an empty file, the last 80 log lines (at most 2048 bytes), read from the
 * end of the log without reading the rest of it.
 *
 * @module
 */
import { open } from 'node:fs/promises';
import type { ContainerStatus } from '@nodeagent/cri';
import {
  CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION,
} from '@nodeagent/kubecontainer';
import { readLastStringFromContainerLog } from './container-log-tail.js';

/** Most bytes of a termination message file read (upstream `MaxContainerTerminationMessageLength`). */
export const MAX_TERMINATION_MESSAGE_BYTES = 4096;
/** Log lines used as fallback message (upstream `MaxContainerTerminationMessageLogLines`). */
export const MAX_TERMINATION_MESSAGE_LOG_LINES = 80;
/** Bytes of log used as fallback message (upstream `MaxContainerTerminationMessageLogLength`). */
export const MAX_TERMINATION_MESSAGE_LOG_BYTES = 2048;

async function readAtMost(path: string, max: number): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const length = Math.min(size, max);
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, size - length);
    return buf.toString('utf8');
  } finally {
    await fh.close();
  }
}

async function lastLogLines(logPath: string): Promise<string> {
  if (logPath === '') return '';
  return readLastStringFromContainerLog(
    logPath,
    MAX_TERMINATION_MESSAGE_LOG_LINES,
    MAX_TERMINATION_MESSAGE_LOG_BYTES,
  );
}

/**
 * The termination message of an exited container (a `TerminationMessageReader` for
 * `criPodStatusSource`); `''` when there is none.
 */
export async function readTerminationMessage(status: ContainerStatus): Promise<string> {
  const path = status.annotations[CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION] ?? '';
  const policy = status.annotations[CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION] ?? 'File';
  const fallback =
    policy === 'FallbackToLogsOnError' && status.exitCode !== 0 && status.reason !== 'ContainerCannotRun';
  let message = '';
  let checkLogs = fallback;
  const mount = path === '' ? undefined : status.mounts.find((m) => m.containerPath === path);
  if (mount !== undefined) {
    try {
      message = await readAtMost(mount.hostPath, MAX_TERMINATION_MESSAGE_BYTES);
      checkLogs = fallback && message.length === 0;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        return `Error on reading termination log ${mount.hostPath}: ${(err as Error).message}`;
      }
    }
  }
  return checkLogs ? lastLogLines(status.logPath) : message;
}
