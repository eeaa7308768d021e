// The public types: typed events carry their payloads, options reject wrong shapes, and the
// result lookup plugs into kuberuntime's probe options without casts.
import type { PodActionsOptions } from '@nodeagent/kuberuntime';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type CommandRunner,
  criCommandRunner,
  type ProbeManager,
  type ProbeManagerOptions,
  type ProbeResultUpdate,
  type RestartRequest,
} from '../src/index.js';

declare const manager: ProbeManager;

describe('ProbeManager events', () => {
  it('types each event payload', () => {
    manager.on('result', (u) => expectTypeOf(u).toEqualTypeOf<ProbeResultUpdate>());
    manager.on('restart', (r) => {
      expectTypeOf(r).toEqualTypeOf<RestartRequest>();
      expectTypeOf(r.gracePeriodSeconds).toBeNumber();
      expectTypeOf(r.reason).toEqualTypeOf<'LivenessProbe' | 'StartupProbe'>();
    });
    // @ts-expect-error: no such event
    manager.on('restarted', () => {});
  });

  it("the lookups fit kuberuntime's probe options", () => {
    const probes: PodActionsOptions = {
      liveness: manager.resultLookup('liveness'),
      startup: manager.resultLookup('startup'),
    };
    expectTypeOf(probes).toMatchTypeOf<PodActionsOptions>();
    expectTypeOf(manager.shouldRestart).parameter(0).toBeString();
  });
});

describe('ProbeManagerOptions', () => {
  it('needs a status provider; the rest is optional', () => {
    expectTypeOf<{
      statusProvider: { getPodStatus: (uid: string) => undefined };
    }>().toMatchTypeOf<ProbeManagerOptions>();
    // @ts-expect-error: statusProvider is required
    const missing: ProbeManagerOptions = {};
    void missing;
    expectTypeOf(criCommandRunner).returns.toEqualTypeOf<CommandRunner>();
  });
});
