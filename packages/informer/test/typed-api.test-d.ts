import type { V1Pod, V1Service } from '@kubernetes/client-node';
import type { Lifecycle } from '@nodeagent/core';
import {
  type ApiObject,
  type DeletedFinalStateUnknown,
  type EventHandler,
  type HandlerRegistration,
  type KubeObject,
  type Lister,
  SharedInformer,
  type SharedInformerEvents,
  SharedInformerFactory,
  type WatchErrorContext,
} from '@nodeagent/informer';
import { FakeListerWatcher } from '@nodeagent/informer/testing';
import { describe, expectTypeOf, it } from 'vitest';

interface Widget extends KubeObject {
  readonly spec?: { readonly size: number };
}

describe('SharedInformer<T>', () => {
  const informer = new SharedInformer(new FakeListerWatcher<Widget>());

  it('infers T from the ListerWatcher and types handlers, lister and cache', () => {
    expectTypeOf(informer).toEqualTypeOf<SharedInformer<Widget>>();
    expectTypeOf(informer.lister).toEqualTypeOf<Lister<Widget>>();
    expectTypeOf(informer.lister.list()).toEqualTypeOf<Widget[]>();
    expectTypeOf(informer.addEventHandler).parameter(0).toEqualTypeOf<EventHandler<Widget>>();
    expectTypeOf(informer.addEventHandler({})).toEqualTypeOf<HandlerRegistration>();
    informer.addEventHandler({
      onAdd: (obj, initial) => {
        expectTypeOf(obj).toEqualTypeOf<Widget>();
        expectTypeOf(initial).toEqualTypeOf<boolean>();
      },
      onUpdate: (oldObj, newObj) => {
        expectTypeOf(oldObj).toEqualTypeOf<Widget>();
        expectTypeOf(newObj.spec?.size).toEqualTypeOf<number | undefined>();
      },
      onDelete: (obj) => {
        expectTypeOf(obj).toEqualTypeOf<Widget | DeletedFinalStateUnknown<Widget>>();
      },
    });
  });

  it('has the core Lifecycle and typed events', () => {
    expectTypeOf(informer).toMatchTypeOf<Lifecycle>();
    expectTypeOf(informer.start).toEqualTypeOf<(signal?: AbortSignal) => Promise<void>>();
    expectTypeOf(informer.stop).toEqualTypeOf<() => Promise<void>>();
    informer.on('watchError', (error, context) => {
      expectTypeOf(error).toEqualTypeOf<Error>();
      expectTypeOf(context).toEqualTypeOf<WatchErrorContext>();
    });
    informer.on('handlerError', (_error, info) => {
      expectTypeOf(info.notification).toEqualTypeOf<'add' | 'update' | 'delete'>();
    });
    expectTypeOf<SharedInformerEvents['synced']>().toEqualTypeOf<[]>();
    // @ts-expect-error not an event of the informer
    informer.on('nope', () => {});
  });
});

describe('SharedInformerFactory typed helpers', () => {
  const factory = new SharedInformerFactory({ listerWatcherFor: () => new FakeListerWatcher() });

  it('pods() gives V1Pod, services() V1Service; an explicit T wins', () => {
    expectTypeOf(factory.pods()).toEqualTypeOf<SharedInformer<ApiObject<V1Pod>>>();
    expectTypeOf(factory.pods().lister.list()[0]?.spec?.nodeName).toEqualTypeOf<string | undefined>();
    expectTypeOf(factory.services()).toEqualTypeOf<SharedInformer<ApiObject<V1Service>>>();
    expectTypeOf(factory.pods<Widget>()).toEqualTypeOf<SharedInformer<Widget>>();
    expectTypeOf(
      factory.informerFor<Widget>({ group: 'x.io', version: 'v1', resource: 'widgets' }),
    ).toEqualTypeOf<SharedInformer<Widget>>();
  });

  it('has the core Lifecycle', () => {
    expectTypeOf(factory).toMatchTypeOf<Lifecycle>();
    // @ts-expect-error shutdown() is gone: stop() is the lifecycle
    factory.shutdown();
  });
});
