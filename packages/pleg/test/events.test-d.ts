// Type-level tests of pleg's event-typed API (compiled by `tsc -b`, never run).
import type { Channel } from '@nodeagent/core';
import type { PodStatus } from '@nodeagent/kubecontainer';
import { expectTypeOf } from 'vitest';
import type {
  CachedPodStatus,
  EventedPLEG,
  FallbackReason,
  GenericPLEG,
  PlegHealth,
  PodLifecycleEvent,
  PodLifecycleEventType,
  RelistResult,
} from '../src/index.js';

declare const generic: GenericPLEG;
declare const evented: EventedPLEG;

// Notifications carry typed arguments.
generic.on('relist', (result) => expectTypeOf(result).toEqualTypeOf<RelistResult>());
generic.on('relistError', (error) => expectTypeOf(error).toEqualTypeOf<Error>());
generic.on('inspectError', (uid, error) => {
  expectTypeOf(uid).toEqualTypeOf<string>();
  expectTypeOf(error).toEqualTypeOf<Error>();
});
evented.on('fallback', (reason, error) => {
  expectTypeOf(reason).toEqualTypeOf<FallbackReason>();
  expectTypeOf(error).toEqualTypeOf<Error>();
});
// @ts-expect-error not a notification of the generic PLEG
generic.on('fallback', () => {});
// @ts-expect-error wrong listener arity/type
generic.on('relist', (_result: string) => {});

// Events are the kubelet's PodLifecycleEvent through the one core Channel.
expectTypeOf(generic.events()).toEqualTypeOf<AsyncIterable<PodLifecycleEvent>>();
expectTypeOf(generic.channel).toEqualTypeOf<Channel<PodLifecycleEvent>>();
expectTypeOf(evented.channel).toEqualTypeOf<Channel<PodLifecycleEvent>>();
expectTypeOf<PodLifecycleEvent['type']>().toEqualTypeOf<PodLifecycleEventType>();
expectTypeOf<'ContainerStarted'>().toExtend<PodLifecycleEventType>();
expectTypeOf<'ContainerExploded'>().not.toExtend<PodLifecycleEventType>();

// The one lifecycle.
expectTypeOf(generic.start).toEqualTypeOf<(signal?: AbortSignal) => Promise<void>>();
expectTypeOf(generic.stop).toEqualTypeOf<() => Promise<void>>();
expectTypeOf(evented.start).toEqualTypeOf<(signal?: AbortSignal) => Promise<void>>();
expectTypeOf(generic.healthy()).toEqualTypeOf<PlegHealth>();

// The cache hands out the kubecontainer model.
expectTypeOf(generic.cache.get('uid')).toEqualTypeOf<CachedPodStatus>();
expectTypeOf(generic.cache.get('uid').status).toEqualTypeOf<PodStatus>();
expectTypeOf(generic.cache.getNewerThan).returns.toEqualTypeOf<Promise<CachedPodStatus>>();
