/**
 * Reads an exited container's termination message for its status (upstream
 * `getTerminationMessage`, `readLastStringFromContainerLogs`): the file mounted at
 * `terminationMessagePath` (at most 4096 bytes), or with `FallbackToLogsOnError` and a
 * non-zero exit and an empty file, the last 80 log lines (at most 2048 bytes).
 *
 * @module
 */
import { open, readFile } from 'node:fs/promises';
import { type ContainerStatus, parseCriLog } from '@nodeagent/cri';
import {
  CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION,
} from '@nodeagent/kubecontainer';

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
  let text: string;
  try {
    text = await readFile(logPath, 'utf8');
  } catch {
    return '';
  }
  const lines = parseCriLog(text)
    .slice(-MAX_TERMINATION_MESSAGE_LOG_LINES)
    .map((l) => `${l.content}\n`)
    .join('');
  const bytes = Buffer.from(lines, 'utf8');
  return bytes.length <= MAX_TERMINATION_MESSAGE_LOG_BYTES
    ? lines
    : bytes.subarray(bytes.length - MAX_TERMINATION_MESSAGE_LOG_BYTES).toString('utf8');
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
