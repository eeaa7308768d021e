/**
 * The in-process runtime of the embedded defaults: `FakeRuntime` from
 * `@nodeagent/cri/testing` with a busybox-like image preloaded (and pullable) and a few
 * behaviour rules so shell commands act roughly as they would: a command ending in `exit N`
 * (or `false`/`true`) exits at once with that code, one ending in `sleep N` (N ≤ 600) exits
 * with 0 after N seconds, anything else runs until it is stopped.
 *
 * @module
 */
import { type Clock, definedFields } from '@nodeagent/core';
import { type BehaviourRule, FakeRuntime } from '@nodeagent/cri/testing';

/** The busybox-like image the embedded runtime has (the same reference as the real-node sandbox's). */
export const EMBEDDED_BUSYBOX_IMAGE = 'registry.local/busybox:latest';
/** The sandbox image it has. */
export const EMBEDDED_PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
const MAX_SLEEP_SECONDS = 600;

function escapeTail(word: string): RegExp {
  // The last shell command of the argv (after `;`, `&&`, `||` or at the start).
  return new RegExp(`(^|[;&|]\\s*|^sh -c\\s+)${word}\\s*$`);
}

/** The behaviour rules described in the module comment, in match order. */
export function busyboxLikeBehaviours(): BehaviourRule[] {
  const rules: BehaviourRule[] = [];
  rules.push({ match: { command: escapeTail('true') }, behaviour: { crashOnStart: true, exitCode: 0 } });
  rules.push({ match: { command: escapeTail('false') }, behaviour: { crashOnStart: true, exitCode: 1 } });
  for (let code = 0; code <= 255; code++) {
    rules.push({
      match: { command: escapeTail(`exit ${code}`) },
      behaviour: { crashOnStart: true, exitCode: code },
    });
  }
  for (let s = 1; s <= MAX_SLEEP_SECONDS; s++) {
    rules.push({
      match: { command: escapeTail(`sleep ${s}`) },
      behaviour: { exitAfterMs: s * 1000, exitCode: 0 },
    });
  }
  return rules;
}

/** Options of {@link startEmbeddedRuntime}. */
export interface EmbeddedRuntimeOptions {
  /** Pod IP range. @default '10.88.0.0/16' */
  readonly podCidr?: string | undefined;
  /** @default realClock */
  readonly clock?: Clock;
}

/** Starts the fake runtime on a unix socket in a fresh temp directory; returns it and its endpoint. */
export async function startEmbeddedRuntime(
  options: EmbeddedRuntimeOptions = {},
): Promise<{ readonly runtime: FakeRuntime; readonly endpoint: string }> {
  const images = [{ ref: EMBEDDED_BUSYBOX_IMAGE }, { ref: EMBEDDED_PAUSE_IMAGE }, { ref: 'pause' }];
  const runtime = new FakeRuntime({
    images,
    registryImages: images,
    behaviours: busyboxLikeBehaviours(),
    ...definedFields({ podCidr: options.podCidr, clock: options.clock }),
  });
  await runtime.start();
  return { runtime, endpoint: runtime.endpoint };
}
