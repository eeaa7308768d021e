import { FakeClock } from '@nodeagent/core/testing';
import * as promClient from 'prom-client';
import type { DeletedFinalStateUnknown, KubeObject, SharedInformerOptions } from '../src/index.js';
import { RestListerWatcher, SharedInformer } from '../src/index.js';
import { ScriptedServer } from './scripted-server.js';

export interface Recorded {
  readonly adds: { name: string; initial: boolean }[];
  readonly updates: { old: string; new: string }[];
  readonly deletes: (KubeObject | DeletedFinalStateUnknown)[];
}

export async function setup(options: SharedInformerOptions = {}, token?: string) {
  const server = await new ScriptedServer().start();
  const clock = new FakeClock();
  server.clock = clock;
  const registry = new promClient.Registry();
  const lw = new RestListerWatcher({ kubeConfig: server.kubeConfig(token), path: '/api/v1/pods' });
  const informer = new SharedInformer(lw, {
    clock,
    random: () => 0.5,
    metrics: { registry, promClient },
    name: 'pods',
    ...options,
  });
  const errors: Error[] = [];
  informer.on('watchError', (e) => errors.push(e));
  const seen: Recorded = { adds: [], updates: [], deletes: [] };
  informer.addEventHandler({
    onAdd: (o, initial) => void seen.adds.push({ name: o.metadata?.name ?? '', initial }),
    onUpdate: (o, n) =>
      void seen.updates.push({
        old: o.metadata?.resourceVersion ?? '',
        new: n.metadata?.resourceVersion ?? '',
      }),
    onDelete: (o) => void seen.deletes.push(o),
  });
  const advance = () => clock.advance(500);
  const cleanup = async () => {
    await informer.stop();
    lw.close();
    await server.close();
  };
  const names = () =>
    informer.lister
      .list()
      .map((p) => `${p.metadata?.name}@${p.metadata?.resourceVersion}`)
      .sort();
  const metric = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return { server, clock, informer, errors, seen, advance, cleanup, names, registry, metric, lw };
}

/** Polls `cond` every 20 ms (real time) until it holds; fails naming `what` after `timeoutMs`. */
export async function until(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A minimal pod `default/<name>`. */
export function testPod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
}
