// The benchmark's probed pods, shared by probes.bench.ts and profile-manager.ts: pod `bench-<p>`
// with `perPod` containers, each with a 1 s readiness probe (httpGet /healthz or tcpSocket, as
// `target` says for the container's global index), and the Running status the prober reads.
import type { V1Container, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { startedContainer } from '../test/helpers.js';

/** Which kind of probe container `i` gets, against which local port. */
export type BenchTarget = (i: number) => { kind: 'http' | 'tcp' | 'exec'; port: number };

/** Pod `p` of the benchmark and its status (containers started at `startedAt`). */
export function benchPod(
  p: number,
  perPod: number,
  target: BenchTarget,
  startedAt: Date,
): { pod: V1Pod; status: V1PodStatus } {
  const uid = `bench-${p}`;
  const containers: V1Container[] = [];
  for (let c = 0; c < perPod; c++) {
    const { kind, port } = target(p * perPod + c);
    const handler =
      kind === 'http'
        ? { httpGet: { port, path: '/healthz' } }
        : kind === 'tcp'
          ? { tcpSocket: { port } }
          : { exec: { command: ['true'] } };
    containers.push({
      name: `c${c}`,
      image: 'x',
      readinessProbe: { ...handler, periodSeconds: 1, timeoutSeconds: 1 },
    });
  }
  return {
    pod: { metadata: { name: uid, namespace: 'bench', uid }, spec: { containers } },
    status: {
      phase: 'Running',
      podIP: '127.0.0.1',
      containerStatuses: containers.map((c) =>
        startedContainer(c.name, `containerd://${uid}-${c.name}`, startedAt),
      ),
    },
  };
}
