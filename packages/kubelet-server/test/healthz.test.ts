// The apiserver healthz format the kubelet serves: `ok`, `[+]/[-]` lines with ?verbose,
// `?exclude=`, and `/healthz/<name>` for one check.
import { describe, expect, it } from 'vitest';
import { serveHealthz } from '../src/index.js';

const checks = { ping: () => undefined, syncloop: () => 'sync loop last ran 600s ago' };

describe('healthz', () => {
  it('answers ok when healthy, lists checks with ?verbose', () => {
    expect(serveHealthz({ ping: () => undefined }, '/healthz', new URLSearchParams())).toEqual({
      code: 200,
      body: 'ok',
    });
    expect(serveHealthz({ ping: () => undefined }, '/healthz', new URLSearchParams('verbose'))?.body).toBe(
      '[+]ping ok\nhealthz check passed\n',
    );
  });

  it('fails with 500 naming the failing check, which ?exclude skips', () => {
    expect(serveHealthz(checks, '/healthz', new URLSearchParams())).toEqual({
      code: 500,
      body: '[+]ping ok\n[-]syncloop failed: sync loop last ran 600s ago\nhealthz check failed\n',
    });
    expect(serveHealthz(checks, '/healthz', new URLSearchParams('exclude=syncloop'))?.code).toBe(200);
  });

  it('runs one check at /healthz/<name>; 404 for an unknown one; undefined off /healthz', () => {
    expect(serveHealthz(checks, '/healthz/ping', new URLSearchParams())).toEqual({ code: 200, body: 'ok' });
    expect(serveHealthz(checks, '/healthz/syncloop', new URLSearchParams())?.code).toBe(500);
    expect(serveHealthz(checks, '/healthz/nope', new URLSearchParams())?.code).toBe(404);
    expect(serveHealthz(checks, '/pods', new URLSearchParams())).toBeUndefined();
  });
});
