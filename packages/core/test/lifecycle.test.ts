import { AlreadyStartedError, raceAbort, StartOnce } from '@nodeagent/core';
import { describe, expect, it } from 'vitest';

describe('raceAbort', () => {
  it('resolves with the promise when the signal does not abort', async () => {
    await expect(raceAbort(Promise.resolve(5), new AbortController().signal)).resolves.toBe(5);
  });

  it('rejects with the abort reason as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const never = new Promise<number>(() => {});
    const raced = raceAbort(never, controller.signal);
    controller.abort(new Error('not ready in time'));
    await expect(raced).rejects.toThrow('not ready in time');
  });

  it('rejects at once for an already aborted signal', async () => {
    await expect(raceAbort(Promise.resolve(1), AbortSignal.abort())).rejects.toThrow();
  });
});

describe('StartOnce', () => {
  it('rejects a second start', async () => {
    const once = new StartOnce('Thing');
    await once.run(
      undefined,
      async () => {},
      async () => {},
    );
    await expect(
      once.run(
        undefined,
        async () => {},
        async () => {},
      ),
    ).rejects.toBeInstanceOf(AlreadyStartedError);
  });

  it('stops the piece when the wait for readiness is aborted, then rejects', async () => {
    const once = new StartOnce('Thing');
    const controller = new AbortController();
    let stopped = 0;
    const started = once.run(
      controller.signal,
      () => new Promise<void>(() => {}),
      async () => {
        stopped++;
      },
    );
    controller.abort();
    await expect(started).rejects.toThrow();
    expect(stopped).toBe(1);
  });

  it('ignores an abort after start resolved (the signal bounds readiness, not the lifetime)', async () => {
    const once = new StartOnce('Thing');
    const controller = new AbortController();
    let stopped = 0;
    await once.run(
      controller.signal,
      async () => {},
      async () => {
        stopped++;
      },
    );
    controller.abort();
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(0);
  });
});
