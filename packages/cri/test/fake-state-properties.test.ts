// Property test of the fake's state machine (directly, without gRPC): any sequence of
// lifecycle calls keeps the invariants a kubelet relies on.
import { FakeClock } from '@nodeagent/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImageStore } from '../src/fake/image-store.js';
import { IpPool } from '../src/fake/ip-pool.js';
import { RuntimeState } from '../src/fake/runtime-state.js';
import {
  ContainerConfig,
  ContainerEventType,
  ContainerState,
  PodSandboxConfig,
  PodSandboxState,
} from '../src/gen/runtime/v1/api.js';

const IMAGE = 'registry.local/busybox:latest';

type Op =
  | { kind: 'run' }
  | { kind: 'stopPod' | 'removePod' | 'create'; pod: number }
  | { kind: 'start' | 'stop' | 'remove' | 'kill'; ctr: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: 'run' }),
  fc.record({
    kind: fc.constantFrom('stopPod' as const, 'removePod' as const, 'create' as const),
    pod: fc.nat(5),
  }),
  fc.record({
    kind: fc.constantFrom('start' as const, 'stop' as const, 'remove' as const, 'kill' as const),
    ctr: fc.nat(8),
  }),
);

describe('FakeRuntime state machine properties', () => {
  it('keeps IPs unique, containers inside live sandboxes, and events in step with objects', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const clock = new FakeClock();
        const images = new ImageStore();
        images.preload({ ref: IMAGE });
        const pool = new IpPool('10.5.0.0/29'); // 5 usable addresses: exhaustion is reachable
        const state = new RuntimeState({ clock, images, ipPool: () => pool, behaviours: [], idSeed: 'prop' });
        let live = 0;
        state.onEvent((e) => {
          if (e.containerEventType === ContainerEventType.CONTAINER_CREATED_EVENT) live++;
          if (e.containerEventType === ContainerEventType.CONTAINER_DELETED_EVENT) live--;
        });
        let n = 0;
        const pods = () => [...state.sandboxes.keys()];
        const ctrs = () => [...state.containers.keys()];
        for (const o of ops) {
          n++;
          const pod = 'pod' in o ? (pods()[o.pod % Math.max(1, pods().length)] ?? 'missing') : '';
          const ctr = 'ctr' in o ? (ctrs()[o.ctr % Math.max(1, ctrs().length)] ?? 'missing') : '';
          try {
            if (o.kind === 'run') {
              const config = PodSandboxConfig.fromPartial({
                metadata: { name: `p${n}`, namespace: 'ns', uid: `u${n}` },
              });
              state.runPodSandbox(config, '');
            } else if (o.kind === 'stopPod') state.stopPodSandbox(pod);
            else if (o.kind === 'removePod') state.removePodSandbox(pod);
            else if (o.kind === 'create') {
              const config = ContainerConfig.fromPartial({
                metadata: { name: `c${n}` },
                image: { image: IMAGE },
              });
              state.createContainer(pod, config);
            } else if (o.kind === 'start') await state.startContainer(ctr);
            else if (o.kind === 'stop') await state.stopContainer(ctr, 0);
            else if (o.kind === 'remove') state.removeContainer(ctr);
            else if (o.kind === 'kill' && state.containers.has(ctr)) {
              const c = state.requireContainer(ctr);
              state.exit(c, 137, 'OOMKilled', '');
            }
          } catch (err) {
            // Refusals must be typed gRPC answers (NOT_FOUND, FAILED_PRECONDITION, RESOURCE_EXHAUSTED).
            expect((err as { code?: unknown }).code).toBeTypeOf('number');
          }

          const ready = [...state.sandboxes.values()].filter(
            (s) => s.state === PodSandboxState.SANDBOX_READY,
          );
          const ips = ready.map((s) => s.ip);
          expect(new Set(ips).size).toBe(ips.length);
          for (const ip of ips) expect(pool.contains(ip)).toBe(true);
          for (const s of state.sandboxes.values()) {
            if (s.state === PodSandboxState.SANDBOX_NOTREADY) expect(s.ip).toBe('');
          }
          for (const c of state.containers.values()) {
            const sandbox = state.sandboxes.get(c.sandboxId);
            expect(sandbox).toBeDefined();
            if (c.state === ContainerState.CONTAINER_RUNNING) {
              expect(sandbox?.state).toBe(PodSandboxState.SANDBOX_READY);
              expect(c.startedAtNs).toBeGreaterThan(0n);
              expect(c.finishedAtNs).toBe(0n);
            }
            if (c.state === ContainerState.CONTAINER_EXITED)
              expect(c.finishedAtNs).toBeGreaterThan(c.createdAtNs);
          }
          const byState = [
            ContainerState.CONTAINER_CREATED,
            ContainerState.CONTAINER_RUNNING,
            ContainerState.CONTAINER_EXITED,
          ]
            .map(
              (s) =>
                state.listContainers({ id: '', podSandboxId: '', labelSelector: {}, state: { state: s } })
                  .length,
            )
            .reduce((a, b) => a + b, 0);
          expect(byState).toBe(state.containers.size);
          expect(live).toBe(state.sandboxes.size + state.containers.size);
        }
      }),
      { numRuns: 150 },
    );
  });
});
