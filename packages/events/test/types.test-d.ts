// The public types: the pod adapter plugs into the prober's and the runtime manager's recorder
// options without casts, event types are the API's two, and a REST client with the reference
// agent's `create`/`patch` shape is a JsonApiClient.
import type { RuntimeEventRecorder } from '@nodeagent/kuberuntime';
import type { ProbeEventRecorder } from '@nodeagent/prober';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type DropReason,
  type EventRecorder,
  type EventType,
  type JsonApiClient,
  podEventRecorder,
} from '../src/index.js';

declare const recorder: EventRecorder;

describe('public types', () => {
  it("podEventRecorder fits the prober's and kuberuntime's recorder options", () => {
    const forProber: ProbeEventRecorder = podEventRecorder(recorder);
    const forRuntime: RuntimeEventRecorder = podEventRecorder(recorder);
    expectTypeOf(forProber).toBeFunction();
    expectTypeOf(forRuntime).toBeFunction();
  });

  it('event types are Normal and Warning only', () => {
    expectTypeOf<EventType>().toEqualTypeOf<'Normal' | 'Warning'>();
    // @ts-expect-error: not an event type
    recorder.event({ kind: 'Node', name: 'n' }, 'Info', 'Starting', 'x');
  });

  it('a client with create/patch (the reference agent ApiClient shape) is a JsonApiClient', () => {
    class AgentLikeClient {
      create<T>(_path: string, body: T, _signal?: AbortSignal): Promise<T> {
        return Promise.resolve(body);
      }
      patch<T>(
        _path: string,
        _kind: 'merge' | 'strategic',
        _patch: unknown,
        _signal?: AbortSignal,
      ): Promise<T> {
        return Promise.reject(new Error('unused'));
      }
    }
    expectTypeOf(new AgentLikeClient()).toMatchTypeOf<JsonApiClient>();
  });

  it('dropped() is keyed by the documented reasons', () => {
    expectTypeOf(recorder.dropped()).toEqualTypeOf<ReadonlyMap<DropReason, number>>();
    expectTypeOf<DropReason>().toEqualTypeOf<
      'queue_full' | 'spam_filter' | 'retries_exhausted' | 'rejected' | 'invalid' | 'shutdown'
    >();
  });
});
