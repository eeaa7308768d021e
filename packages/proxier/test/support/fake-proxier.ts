/**
 * A Proxier on fake informers and a fake clock, for sync-loop tests: what dual-stack, sync-owner
 * and the iptables canary tests share. The Proxier stops when the test finishes.
 */
import { FakeClock } from '@nodeagent/core/testing';
import type { InformerRequest, KubeObject } from '@nodeagent/informer';
import { FakeListerWatcher } from '@nodeagent/informer/testing';
import { onTestFinished } from 'vitest';
import { Proxier, type ProxierOptions } from '../../src/index.js';

/** The fake clock's start (ms since the epoch). */
export const T0 = 1_700_000_000_000;

/** FakeListerWatchers by resource, each made on first use (an unseeded resource lists empty). */
export interface FakeListerWatchers {
  /** The lister-watcher of `resource`. */
  lw(resource: string): FakeListerWatcher;
  /** Adds or replaces `obj` in `resource`. */
  upsert(resource: string, obj: unknown): void;
  /** For `ProxierOptions.listerWatcherFor`. */
  listerWatcherFor(req: InformerRequest): FakeListerWatcher;
}

/** Empty {@link FakeListerWatchers}. */
export function fakeListerWatchers(): FakeListerWatchers {
  const lws = new Map<string, FakeListerWatcher>();
  const lw = (resource: string) => {
    let f = lws.get(resource);
    if (!f) {
      f = new FakeListerWatcher();
      lws.set(resource, f);
    }
    return f;
  };
  return {
    lw,
    upsert: (resource, obj) => lw(resource).upsert(obj as KubeObject),
    listerWatcherFor: (req) => lw(req.resource),
  };
}

/**
 * Starts a Proxier over `backend` (or the backend made on the Proxier's clock) on `lws`, timed by a
 * FakeClock at {@link T0}: minSyncPeriod 1 s, syncPeriod 30 s, no healthz, health-check node ports
 * or conntrack unless `extra` says otherwise.
 */
export async function startFakeClockProxier(
  backend: ProxierOptions['backend'] | ((clock: FakeClock) => ProxierOptions['backend']),
  lws: FakeListerWatchers,
  extra: Partial<ProxierOptions> = {},
) {
  const clock = new FakeClock({ startMs: T0 });
  const proxier = new Proxier({
    nodeName: 'node-a',
    backend: typeof backend === 'function' ? backend(clock) : backend,
    listerWatcherFor: lws.listerWatcherFor,
    clock,
    minSyncPeriodMs: 1_000,
    syncPeriodMs: 30_000,
    healthz: false,
    healthCheckNodePorts: false,
    conntrack: false,
    ...extra,
  });
  onTestFinished(() => proxier.stop());
  await proxier.start();
  return { proxier, clock };
}
