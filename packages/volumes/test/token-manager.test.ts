// The token manager as upstream's: cached while fresh, refreshed past 80 % of the lifetime or
// 24 h, the cached token kept when a refresh fails until it expires.
import { FakeClock } from '@nodeagent/core/testing';
import { describe, expect, it } from 'vitest';
import { TokenManager, type TokenRequestSpec, VolumeError } from '../src/index.js';
import { FakeDataSource } from './helpers.js';

const spec = (expirationSeconds: number, uid = 'u1'): TokenRequestSpec => ({
  audiences: ['api'],
  expirationSeconds,
  boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid },
});

function setup(jitter = 0) {
  const clock = new FakeClock();
  const source = new FakeDataSource(clock);
  const tokens = new TokenManager({ source, clock, random: () => jitter });
  return { clock, source, tokens };
}

describe('TokenManager', () => {
  it('serves the cached token until 80 % of its lifetime, then requests a new one', async () => {
    const { clock, source, tokens } = setup();
    const first = await tokens.getServiceAccountToken('ns', 'sa', spec(3600));
    await clock.advance(2880_000); // exactly 80 %: not yet after
    expect(await tokens.getServiceAccountToken('ns', 'sa', spec(3600))).toBe(first);
    await clock.advance(1000);
    const second = await tokens.getServiceAccountToken('ns', 'sa', spec(3600));
    expect(second.token).not.toBe(first.token);
    expect(source.tokenRequests).toHaveLength(2);
  });

  it('refreshes up to 10 s earlier with the jitter (whole seconds, as Duration(rand*10)*Second)', async () => {
    const { clock, source, tokens } = setup(0.99); // 9 s
    await tokens.getServiceAccountToken('ns', 'sa', spec(3600));
    await clock.advance(2880_000 - 9000);
    await tokens.getServiceAccountToken('ns', 'sa', spec(3600));
    expect(source.tokenRequests).toHaveLength(1);
    await clock.advance(1);
    await tokens.getServiceAccountToken('ns', 'sa', spec(3600));
    expect(source.tokenRequests).toHaveLength(2);
  });

  it('refreshes a token older than 24 h even when its lifetime is longer', async () => {
    const { clock, source, tokens } = setup();
    const week = 7 * 24 * 3600;
    await tokens.getServiceAccountToken('ns', 'sa', spec(week));
    await clock.advance(24 * 3600_000);
    await tokens.getServiceAccountToken('ns', 'sa', spec(week));
    expect(source.tokenRequests).toHaveLength(1);
    await clock.advance(1000);
    await tokens.getServiceAccountToken('ns', 'sa', spec(week));
    expect(source.tokenRequests).toHaveLength(2);
  });

  it('keys the cache by audience, expiration and bound pod', async () => {
    const { source, tokens } = setup();
    await tokens.getServiceAccountToken('ns', 'sa', spec(3600, 'u1'));
    await tokens.getServiceAccountToken('ns', 'sa', spec(3600, 'u2'));
    await tokens.getServiceAccountToken('ns', 'sa', spec(7200, 'u1'));
    await tokens.getServiceAccountToken('ns', 'sa', spec(3600, 'u1'));
    expect(source.tokenRequests).toHaveLength(3);
    tokens.deleteServiceAccountToken('u1');
    expect(tokens.size).toBe(1);
  });

  it('keeps serving the cached token when a refresh fails, until it expires', async () => {
    const { clock, source, tokens } = setup();
    const first = await tokens.getServiceAccountToken('ns', 'sa', spec(3600));
    source.tokenFailWith = new Error('connection refused');
    await clock.advance(3000_000);
    expect(await tokens.getServiceAccountToken('ns', 'sa', spec(3600))).toBe(first);
    await clock.advance(700_000);
    const err = await tokens.getServiceAccountToken('ns', 'sa', spec(3600)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VolumeError);
    expect((err as Error).message).toBe('failed to fetch token: connection refused');
  });
});
