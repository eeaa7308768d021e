import { emptyPodStatus, type PodStatus } from '@nodeagent/kubecontainer';
import { describe, expect, it } from 'vitest';
import { PodStatusCache } from '../src/index.js';

const status = (uid: string, timestamp: number, ips: string[] = []): PodStatus => ({
  ...emptyPodStatus(uid, 'web', 'default', timestamp),
  ips,
});

/** Resolves to 'pending' if `p` has not settled after the microtask queue drained. */
async function state<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe('PodStatusCache', () => {
  it('a miss returns an empty status with the id only', () => {
    const cache = new PodStatusCache();
    expect(cache.get('u1')).toEqual({ status: emptyPodStatus('u1'), error: undefined });
  });

  it('stores status and error with the timestamp', () => {
    const cache = new PodStatusCache();
    const err = new Error('boom');
    expect(cache.set('u1', undefined, err, 10)).toBe(true);
    expect(cache.get('u1')).toEqual({ status: emptyPodStatus('u1'), error: err });
    cache.set('u1', status('u1', 20), undefined, 20);
    expect(cache.get('u1').status.timestamp).toBe(20);
    expect(cache.modifiedAt('u1')).toBe(20);
    cache.delete('u1');
    expect(cache.modifiedAt('u1')).toBeUndefined();
  });

  it('accepts older writes by default, refuses them with refuseOlderWrites', () => {
    const plain = new PodStatusCache();
    plain.set('u', status('u', 20), undefined, 20);
    expect(plain.set('u', status('u', 10), undefined, 10)).toBe(true);
    const strict = new PodStatusCache({ refuseOlderWrites: true });
    strict.set('u', status('u', 20), undefined, 20);
    expect(strict.set('u', status('u', 10), undefined, 10)).toBe(false);
    expect(strict.get('u').status.timestamp).toBe(20);
    expect(strict.set('u', status('u', 20), undefined, 20)).toBe(true);
  });

  describe('getNewerThan', () => {
    it('returns at once when the entry is strictly newer', async () => {
      const cache = new PodStatusCache();
      cache.set('u', status('u', 100), undefined, 100);
      await expect(cache.getNewerThan('u', 99)).resolves.toMatchObject({ status: { timestamp: 100 } });
      expect(await state(cache.getNewerThan('u', 100))).toBe('pending');
    });

    it('returns at once when the global stamp is strictly newer (a miss gives the empty status)', async () => {
      const cache = new PodStatusCache();
      cache.updateTime(200);
      await expect(cache.getNewerThan('missing', 199)).resolves.toEqual({
        status: emptyPodStatus('missing'),
        error: undefined,
      });
      cache.set('u', status('u', 50), undefined, 50);
      await expect(cache.getNewerThan('u', 150)).resolves.toMatchObject({ status: { timestamp: 50 } });
    });

    it('waits until a set of that pod not before minTime, and ignores other pods and older sets', async () => {
      const cache = new PodStatusCache();
      const read = cache.getNewerThan('u', 100);
      cache.set('other', status('other', 500), undefined, 500);
      cache.set('u', status('u', 99), undefined, 99);
      expect(await state(read)).toBe('pending');
      expect(cache.waiting).toBe(1);
      // "not before": a write stamped exactly minTime releases the reader.
      cache.set('u', status('u', 100), undefined, 100);
      await expect(read).resolves.toMatchObject({ status: { timestamp: 100 } });
      expect(cache.waiting).toBe(0);
    });

    it('is woken by updateTime (the relist) rather than a tick', async () => {
      const cache = new PodStatusCache();
      const a = cache.getNewerThan('a', 100);
      const b = cache.getNewerThan('b', 300);
      cache.updateTime(99);
      expect(await state(a)).toBe('pending');
      cache.updateTime(100);
      await expect(a).resolves.toEqual({ status: emptyPodStatus('a'), error: undefined });
      expect(await state(b)).toBe('pending');
      cache.updateTime(301);
      await expect(b).resolves.toMatchObject({ status: { id: 'b' } });
    });

    it('delete does not wake readers', async () => {
      const cache = new PodStatusCache();
      const read = cache.getNewerThan('u', 100);
      cache.delete('u');
      expect(await state(read)).toBe('pending');
      cache.updateTime(100);
      await read;
    });

    it('rejects on abort and forgets the reader', async () => {
      const cache = new PodStatusCache();
      const controller = new AbortController();
      const read = cache.getNewerThan('u', 100, controller.signal);
      controller.abort(new Error('pod worker stopped'));
      await expect(read).rejects.toThrow('pod worker stopped');
      expect(cache.waiting).toBe(0);
      await expect(cache.getNewerThan('u', 1, AbortSignal.abort())).rejects.toThrow();
    });
  });
});
