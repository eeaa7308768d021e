// The whole agent in process (embedded defaults) with a PLEG relist period far longer than the
// test: a pod still reaches Running in the API, and a deleted pod still goes, because the sync
// that started (or killed) its containers relists that pod at once instead of waiting for the
// next periodic relist (a difference from upstream's generic PLEG, see pod-syncer.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, runAgent } from '../src/agent.js';
import { EMBEDDED_BUSYBOX_IMAGE } from '../src/embedded-runtime.js';
import { FAST_AGENT_TIMINGS, makePod, podNamed, shContainer, testLogger, waitFor } from './helpers.js';

const NODE = 'relist-node';
const RELIST_PERIOD_MS = 600_000;

describe('reference agent: status without waiting for the PLEG period', () => {
  let agent: RunningAgent;
  let relists = 0;

  beforeAll(async () => {
    agent = await runAgent({
      nodeName: NODE,
      healthPort: 0,
      ...FAST_AGENT_TIMINGS,
      relistPeriodMs: RELIST_PERIOD_MS,
      logger: testLogger(),
    });
    agent.pleg.on('relist', () => relists++);
    await waitFor('PLEG healthy', () => agent.pleg.healthy().ok);
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('a new pod reads Running, and a deleted one is gone, with no periodic relist in between', async () => {
    const before = relists;
    await agent.api.create(
      '/api/v1/namespaces/default/pods',
      makePod('quick', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600')], {
        terminationGracePeriodSeconds: 1,
      }),
    );
    const running = await waitFor(
      'quick Running',
      () => {
        const p = podNamed(agent, 'quick');
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      5_000,
    );
    expect(running.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    await agent.api.delete('/api/v1/namespaces/default/pods/quick');
    await waitFor('quick deleted', () => podNamed(agent, 'quick') === undefined, 8_000);
    expect(relists).toBe(before);
    expect(agent.pleg.relistPeriodMs).toBe(RELIST_PERIOD_MS);
  });

  it("one sync for the events a relist sends together: a new pod's sandbox and container start", async () => {
    const syncs: string[] = [];
    const workers = agent.workers;
    const updatePod = workers.updatePod.bind(workers);
    workers.updatePod = (options) => {
      if (options.updateType === 'sync' && options.pod?.metadata?.name === 'pair') syncs.push('sync');
      updatePod(options);
    };
    try {
      await agent.api.create(
        '/api/v1/namespaces/default/pods',
        makePod('pair', NODE, [shContainer('app', EMBEDDED_BUSYBOX_IMAGE, 'sleep 3600')], {
          terminationGracePeriodSeconds: 1,
        }),
      );
      await waitFor('pair Running', () => podNamed(agent, 'pair')?.status?.phase === 'Running', 5_000);
      // Both ContainerStarted events (sandbox, app) of the relist after the first sync: one sync.
      await new Promise((r) => setTimeout(r, 200));
      expect(syncs).toEqual(['sync']);
    } finally {
      workers.updatePod = updatePod;
    }
    await agent.api.delete('/api/v1/namespaces/default/pods/pair');
    await waitFor('pair deleted', () => podNamed(agent, 'pair') === undefined, 8_000);
  });
});
