// Container log rotation as the kubelet's container log manager: past containerLogMaxSize
// (10Mi) the live log is renamed <log>.<YYYYMMDD-hhmmss> and the runtime reopens it (CRI
// ReopenContainerLog); older rotated files are gzipped; at most containerLogMaxFiles (5)
// files are kept, oldest removed first; only running containers are checked; the check runs
// every containerLogMonitorInterval (10 s). A reader yields the history across rotations.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { FakeClock } from '@nodeagent/core/testing';
import { ContainerState } from '@nodeagent/cri';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  ContainerLogManager,
  type ContainerLogManagerOptions,
  type ContainerLogRuntime,
  DEFAULT_CONTAINER_LOG_MAX_FILES,
  DEFAULT_CONTAINER_LOG_MAX_SIZE,
  DEFAULT_CONTAINER_LOG_MAX_WORKERS,
  DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS,
  readContainerLogHistory,
  rotationTimestamp,
} from '../src/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'logrot-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A runtime double: containers with a log path; ReopenContainerLog creates the file as containerd does. */
function runtime(containers: Array<{ id: string; running: boolean; reopenFails?: boolean }>) {
  const calls = { list: 0, reopen: [] as string[], status: [] as string[] };
  const rt: ContainerLogRuntime = {
    listContainers: async () => {
      calls.list++;
      return {
        containers: containers.map((c) => ({
          id: c.id,
          state: c.running ? ContainerState.CONTAINER_RUNNING : ContainerState.CONTAINER_EXITED,
        })),
      } as never;
    },
    containerStatus: async (req) => {
      calls.status.push(req?.containerId ?? '');
      return { status: { logPath: join(dir, `${req?.containerId}.log`) } } as never;
    },
    reopenContainerLog: async (req) => {
      const id = req?.containerId ?? '';
      calls.reopen.push(id);
      if (containers.find((c) => c.id === id)?.reopenFails) throw new Error('rpc error: reopen refused');
      await writeFile(join(dir, `${id}.log`), '', { flag: 'a' });
      return {} as never;
    },
  };
  return { rt, calls };
}

const line = (n: number): string => `2026-01-02T03:04:05.000000000Z stdout F line ${n}\n`;

async function files(): Promise<string[]> {
  return (await readdir(dir)).sort();
}

/**
 * Rotates the log of one running container `c1` `count` times, one second apart (fake clock from
 * 2026-01-02 03:04:00), c1.log holding `line(i)` before rotation i.
 */
async function rotatedLines(count: number, options: Partial<ContainerLogManagerOptions>): Promise<void> {
  const clock = new FakeClock({ startMs: new Date(2026, 0, 2, 3, 4, 0).getTime() });
  const { rt } = runtime([{ id: 'c1', running: true }]);
  const m = new ContainerLogManager({ runtime: rt, clock, ...options });
  for (let i = 0; i < count; i++) {
    await writeFile(join(dir, 'c1.log'), line(i));
    await m.rotateLogs();
    await clock.advance(1000);
  }
}

describe('options', () => {
  test('the kubelet defaults', () => {
    expect(DEFAULT_CONTAINER_LOG_MAX_SIZE).toBe('10Mi');
    expect(DEFAULT_CONTAINER_LOG_MAX_FILES).toBe(5);
    expect(DEFAULT_CONTAINER_LOG_MONITOR_INTERVAL_MS).toBe(10_000);
    expect(DEFAULT_CONTAINER_LOG_MAX_WORKERS).toBe(1);
  });

  test.each([
    [{ containerLogMaxFiles: 1 }, 'containerLogMaxFiles must be an integer >= 2, got 1'],
    [{ containerLogMaxSize: 'ten' }, 'containerLogMaxSize must be a quantity of at least 1 byte, got "ten"'],
    [{ containerLogMaxSize: 0 }, 'containerLogMaxSize must be a quantity of at least 1 byte, got 0'],
    [{ containerLogMonitorIntervalMs: 2999 }, 'containerLogMonitorIntervalMs must be >= 3000, got 2999'],
    [{ containerLogMaxWorkers: 0 }, 'containerLogMaxWorkers must be an integer >= 1, got 0'],
  ])('%j is refused', (opts, message) => {
    expect(() => new ContainerLogManager({ runtime: runtime([]).rt, ...opts })).toThrow(message);
  });

  test('rotated files are named with Go layout 20060102-150405 (local time)', () => {
    const d = new Date(2026, 0, 2, 3, 4, 5);
    expect(rotationTimestamp(d.getTime())).toBe('20260102-030405');
  });
});

describe('rotation', () => {
  test('a log under the size is left alone; at the size it is rotated and reopened', async () => {
    const clock = new FakeClock({ startMs: new Date(2026, 0, 2, 3, 4, 5).getTime() });
    const { rt, calls } = runtime([{ id: 'c1', running: true }]);
    const m = new ContainerLogManager({ runtime: rt, clock, containerLogMaxSize: 100 });
    await writeFile(join(dir, 'c1.log'), 'x'.repeat(99));
    await m.rotateLogs();
    expect(await files()).toEqual(['c1.log']);
    await writeFile(join(dir, 'c1.log'), 'x'.repeat(100));
    await m.rotateLogs();
    expect(await files()).toEqual(['c1.log', 'c1.log.20260102-030405']);
    expect(calls.reopen).toEqual(['c1']);
    expect((await stat(join(dir, 'c1.log'))).size).toBe(0);
    expect(await readFile(join(dir, 'c1.log.20260102-030405'), 'utf8')).toBe('x'.repeat(100));
  });

  test('older rotated files are gzipped and at most containerLogMaxFiles are kept, oldest removed', async () => {
    await rotatedLines(7, { containerLogMaxSize: 10 });
    // The live log, the newest rotated (uncompressed), and three gzipped: 5 files.
    expect(await files()).toEqual([
      'c1.log',
      'c1.log.20260102-030403.gz',
      'c1.log.20260102-030404.gz',
      'c1.log.20260102-030405.gz',
      'c1.log.20260102-030406',
    ]);
    expect(gunzipSync(await readFile(join(dir, 'c1.log.20260102-030403.gz'))).toString()).toBe(line(3));
    expect(await readFile(join(dir, 'c1.log.20260102-030406'), 'utf8')).toBe(line(6));
  });

  test('with containerLogMaxFiles 2 only the live log and the one just rotated remain', async () => {
    await rotatedLines(3, { containerLogMaxSize: 1, containerLogMaxFiles: 2 });
    expect(await files()).toEqual(['c1.log', 'c1.log.20260102-030402']);
  });

  test('a failed ReopenContainerLog puts the log back; the next pass tries again', async () => {
    const clock = new FakeClock({ startMs: new Date(2026, 0, 2, 3, 4, 5).getTime() });
    const containers = [{ id: 'c1', running: true, reopenFails: true }];
    const { rt, calls } = runtime(containers);
    const errors: string[] = [];
    const logger = {
      error: (_o: unknown, msg: string) => errors.push(msg),
      warn() {},
      info() {},
      debug() {},
      child() {
        return logger;
      },
    };
    const m = new ContainerLogManager({
      runtime: rt,
      clock,
      containerLogMaxSize: 1,
      logger: logger as never,
    });
    await writeFile(join(dir, 'c1.log'), line(1));
    await m.rotateLogs();
    expect(await files()).toEqual(['c1.log']);
    expect(errors).toEqual(['Failed to rotate log for container']);
    containers[0] = { id: 'c1', running: true, reopenFails: false };
    await m.rotateLogs();
    expect(await files()).toEqual(['c1.log', 'c1.log.20260102-030405']);
    expect(calls.reopen).toEqual(['c1', 'c1']);
  });

  test('a missing live log is recreated with ReopenContainerLog', async () => {
    const { rt, calls } = runtime([{ id: 'c1', running: true }]);
    const m = new ContainerLogManager({ runtime: rt, clock: new FakeClock(), containerLogMaxSize: 100 });
    await m.rotateLogs();
    expect(calls.reopen).toEqual(['c1']);
    expect(await files()).toEqual(['c1.log']);
  });

  test('only running containers are rotated; one failing container does not stop the others', async () => {
    const clock = new FakeClock({ startMs: new Date(2026, 0, 2, 3, 4, 5).getTime() });
    const { rt } = runtime([
      { id: 'bad', running: true, reopenFails: true },
      { id: 'exited', running: false },
      { id: 'ok', running: true },
    ]);
    const m = new ContainerLogManager({ runtime: rt, clock, containerLogMaxSize: 1 });
    for (const id of ['bad', 'exited', 'ok']) await writeFile(join(dir, `${id}.log`), line(1));
    await m.rotateLogs();
    expect(await files()).toEqual(['bad.log', 'exited.log', 'ok.log', 'ok.log.20260102-030405']);
  });

  test("a running container's log path is asked of the runtime once; a container gone is forgotten", async () => {
    const containers = [
      { id: 'a', running: true },
      { id: 'b', running: true },
    ];
    const { rt, calls } = runtime(containers);
    const m = new ContainerLogManager({ runtime: rt, containerLogMaxSize: 1 });
    for (const id of ['a', 'b']) await writeFile(join(dir, `${id}.log`), line(1));
    await m.rotateLogs();
    expect(calls.status.sort()).toEqual(['a', 'b']);
    // The second pass still rotates (the paths are remembered) without asking again.
    for (const id of ['a', 'b']) await writeFile(join(dir, `${id}.log`), line(2));
    await m.rotateLogs();
    expect(calls.status.sort()).toEqual(['a', 'b']);
    expect(calls.reopen.sort()).toEqual(['a', 'a', 'b', 'b']);
    // b stops running: forgotten; running again (a restart keeps no id, but the double can) asks again.
    containers[1] = { id: 'b', running: false };
    await m.rotateLogs();
    containers[1] = { id: 'b', running: true };
    await m.rotateLogs();
    expect(calls.status.sort()).toEqual(['a', 'b', 'b']);
  });

  test('containerLogMaxWorkers bounds how many containers are rotated at once', async () => {
    const clock = new FakeClock({ startMs: new Date(2026, 0, 2, 3, 4, 5).getTime() });
    const ids = ['a', 'b', 'c', 'd', 'e'];
    for (const workers of [1, 2]) {
      const { rt } = runtime(ids.map((id) => ({ id, running: true })));
      let inFlight = 0;
      let peak = 0;
      const slow: ContainerLogRuntime = {
        ...rt,
        reopenContainerLog: async (req) => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          await new Promise((r) => setTimeout(r, 5));
          inFlight--;
          return rt.reopenContainerLog(req);
        },
      };
      const m = new ContainerLogManager({
        runtime: slow,
        clock,
        containerLogMaxSize: 1,
        containerLogMaxWorkers: workers,
      });
      for (const id of ids) await writeFile(join(dir, `${id}.log`), line(1));
      await m.rotateLogs();
      expect(peak).toBe(workers);
      for (const id of ids) expect(await files()).toContain(`${id}.log.20260102-030405`);
      for (const f of await files()) await rm(join(dir, f));
    }
  });

  test('.tmp leftovers and uncompressed files whose .gz exists are removed', async () => {
    const clock = new FakeClock({ startMs: new Date(2026, 0, 2, 3, 4, 5).getTime() });
    const { rt } = runtime([{ id: 'c1', running: true }]);
    const m = new ContainerLogManager({ runtime: rt, clock, containerLogMaxSize: 1 });
    await writeFile(join(dir, 'c1.log'), line(9));
    await writeFile(join(dir, 'c1.log.20260101-000000'), line(1));
    await writeFile(join(dir, 'c1.log.20260101-000000.gz'), '');
    await writeFile(join(dir, 'c1.log.20260101-000001.tmp'), '');
    await m.rotateLogs();
    expect(await files()).toEqual(['c1.log', 'c1.log.20260101-000000.gz', 'c1.log.20260102-030405']);
  });

  test('the check runs every containerLogMonitorInterval on the clock; stop ends it', async () => {
    const clock = new FakeClock();
    const { rt, calls } = runtime([]);
    const m = new ContainerLogManager({ runtime: rt, clock });
    await m.start();
    await clock.advance(9_999);
    expect(calls.list).toBe(0);
    await clock.advance(1);
    expect(calls.list).toBe(1);
    await clock.advance(10_000);
    expect(calls.list).toBe(2);
    await m.stop();
    await clock.advance(60_000);
    expect(calls.list).toBe(2);
  });

  test('clean removes the live log and every rotated file', async () => {
    const { rt } = runtime([{ id: 'c1', running: false }]);
    const m = new ContainerLogManager({ runtime: rt });
    for (const f of ['c1.log', 'c1.log.1', 'c1.log.2.gz', 'c2.log']) await writeFile(join(dir, f), '');
    await m.clean('c1');
    expect(await files()).toEqual(['c2.log']);
  });
});

describe('readContainerLogHistory', () => {
  test('yields rotated (gzipped and plain) files oldest first, then the live log', async () => {
    await rotatedLines(4, { containerLogMaxSize: 1, containerLogMaxFiles: 10 });
    await writeFile(join(dir, 'c1.log'), `${line(4)}not a cri line\n${line(5)}`);
    const invalid: string[] = [];
    const got: string[] = [];
    for await (const e of readContainerLogHistory(join(dir, 'c1.log'), {
      onInvalidLine: (l) => invalid.push(l),
    })) {
      got.push(e.content);
    }
    expect(await files()).toContain('c1.log.20260102-030400.gz');
    expect(got).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    expect(invalid).toEqual(['not a cri line']);
  });

  test('a container without a log yields nothing', async () => {
    const got = [];
    for await (const e of readContainerLogHistory(join(dir, 'none.log'))) got.push(e);
    expect(got).toEqual([]);
  });
});
