// ApiServerSource: snapshots after sync and after changes; mirror pods kept out of the merge.
import type { V1Pod } from '@kubernetes/client-node';
import type { EventHandler, HandlerRegistration, KubeObject } from '@nodeagent/informer';
import { describe, expect, it } from 'vitest';
import { ApiServerSource, CONFIG_MIRROR_ANNOTATION, PodConfig, type PodInformer } from '../src/index.js';
import { apiPod, drain } from './helpers.js';

type Pod = V1Pod & KubeObject;

class FakeInformer implements PodInformer {
  items: Pod[] = [];
  handler: EventHandler<Pod> | undefined;
  synced!: () => void;
  readonly #sync = new Promise<void>((r) => {
    this.synced = r;
  });
  readonly lister = { list: () => this.items } as unknown as PodInformer['lister'];
  addEventHandler(handler: EventHandler<Pod>): HandlerRegistration {
    this.handler = handler;
    return { name: 'h' } as unknown as HandlerRegistration;
  }
  removeHandler(): void {
    this.handler = undefined;
  }
  waitForSync(): Promise<void> {
    return this.#sync;
  }
}

describe('ApiServerSource', () => {
  it('sends the first snapshot once synced, coalesces changes, and never sends mirror pods', async () => {
    const informer = new FakeInformer();
    const config = new PodConfig();
    const mirrors: V1Pod[][] = [];
    const source = new ApiServerSource({
      informer,
      sink: config.channel('api'),
      onMirrorPods: (m) => mirrors.push(m),
    });
    const mirror = apiPod('static-node-1', 'm', {
      metadata: {
        name: 'static-node-1',
        namespace: 'default',
        uid: 'm',
        annotations: { [CONFIG_MIRROR_ANNOTATION]: 'h' },
      },
    }) as Pod;
    informer.items = [apiPod('a', '1') as Pod, mirror];
    const started = source.start();
    informer.handler?.onAdd?.(informer.items[0] as Pod, true);
    expect(config.seenAllSources()).toBe(false);
    informer.synced();
    await started;
    expect(config.seenAllSources()).toBe(true);
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'api', names: ['a'] }]);
    expect(source.mirrorPods().map((p) => p.metadata?.name)).toEqual(['static-node-1']);
    informer.items = [...informer.items, apiPod('b', '2') as Pod, apiPod('c', '3') as Pod];
    informer.handler?.onAdd?.(informer.items[2] as Pod, false);
    informer.handler?.onAdd?.(informer.items[3] as Pod, false);
    // Coalesced: nothing is sent while the informer is still delivering…
    expect(drain(config)).toEqual([]);
    // …and the one snapshot is sent as a microtask, before the event loop's next turn.
    await Promise.resolve();
    expect(drain(config)).toEqual([{ op: 'ADD', source: 'api', names: ['b', 'c'] }]);
    expect(mirrors).toHaveLength(2);
    await source.stop();
    expect(informer.handler).toBeUndefined();
  });
});
