import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCriLog } from '../src/cri-log.js';
import { rfc3339Nano } from '../src/fake/container-log.js';
import { containerConfig, type FakeHarness, podConfig, startFake } from './fake-fixtures.js';

describe('FakeRuntime container logs', () => {
  let h: FakeHarness;
  let logRoot: string;
  beforeEach(async () => {
    logRoot = await mkdtemp(join(tmpdir(), 'fake-cri-logs-'));
    h = await startFake({
      behaviours: [
        {
          match: { name: 'talker' },
          behaviour: { logLines: ['hello', { stream: 'stderr', text: 'oops' }] },
        },
      ],
    });
  });
  afterEach(async () => {
    await h.close();
    await rm(logRoot, { recursive: true, force: true });
  });

  it('writes scripted lines to log_directory/log_path in the CRI log format at start', async () => {
    const logDirectory = join(logRoot, 'default_web_uid-web');
    const { podSandboxId } = await h.cri.runtime.runPodSandbox({
      config: podConfig('web', { logDirectory }),
    });
    const { containerId } = await h.cri.runtime.createContainer({
      podSandboxId,
      config: containerConfig('talker'),
    });
    await h.cri.runtime.startContainer({ containerId });
    const { status } = await h.cri.runtime.containerStatus({ containerId });
    expect(status?.logPath).toBe(join(logDirectory, 'talker/0.log'));
    const text = await readFile(status?.logPath ?? '', 'utf8');
    const stamp = rfc3339Nano(status?.startedAt ?? 0n);
    expect(text).toBe(`${stamp} stdout F hello\n${stamp} stderr F oops\n`);
    expect(parseCriLog(text).map((l) => [l.stream, l.content])).toEqual([
      ['stdout', 'hello'],
      ['stderr', 'oops'],
    ]);
  });

  it('formats timestamps as RFC 3339 with nanoseconds', () => {
    expect(rfc3339Nano(1_700_000_000_123_456_789n)).toBe('2023-11-14T22:13:20.123456789Z');
  });
});
