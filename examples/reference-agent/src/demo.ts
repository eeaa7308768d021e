/**
 * `--demo`: a small pod set bound to this node — a pod with an init container and two
 * containers, a crash-looping pod, a pod that completes, probed pods (exec readiness and
 * liveness, exec startup, tcpSocket startup + httpGet readiness and liveness, grpc readiness),
 * a pod asking for more CPU than any node has (rejected by admission), a static pod (a
 * manifest in a temp `--pod-manifest-path`), and a Service selecting the first —
 * and a watcher that prints one line whenever a pod's or the Service's endpoints' summary
 * changes.
 *
 * @module
 */
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { type KubeObject, objectOf, type SharedInformerFactory } from '@nodeagent/informer';
import { type ApiClient, ApiError } from './api-client.js';
import { demoMemoryHogPod } from './demo-memory-pressure.js';

/** Namespace of the demo objects. */
export const DEMO_NAMESPACE = 'default';

/** Options of {@link demoPods}. */
export interface DemoPodOptions {
  /**
   * Add the pod with a `grpc` readiness probe: its image must serve `grpc.health.v1` (the
   * embedded runtime's containers do; busybox on a real runtime does not). @default true
   */
  readonly grpcProbe?: boolean;
  /**
   * Add the BestEffort `memory-hog` pod that the embedded runtime's simulated memory makes the
   * eviction manager evict (demo-memory-pressure.ts); only meaningful on the embedded runtime.
   * @default false
   */
  readonly memoryPressure?: boolean;
}

/** The demo's pods for `nodeName`, running `image`. */
export function demoPods(nodeName: string, image: string, options: DemoPodOptions = {}): V1Pod[] {
  const base = (
    name: string,
    labels: Record<string, string>,
    spec: Partial<NonNullable<V1Pod['spec']>>,
  ): V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: DEMO_NAMESPACE,
      labels: { 'app.kubernetes.io/part-of': 'nodeagent-demo', ...labels },
    },
    spec: { nodeName, containers: [], terminationGracePeriodSeconds: 5, ...spec },
  });
  const c = (name: string, script: string) => ({
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
  });
  return [
    base(
      'web',
      { app: 'web' },
      {
        initContainers: [c('init', 'echo preparing; sleep 2')],
        containers: [
          { ...c('app', 'httpd -f -p 8080 -h /'), ports: [{ name: 'http', containerPort: 8080 }] },
          c('sidecar', 'while true; do date; sleep 10; done'),
        ],
      },
    ),
    base('crasher', { app: 'crasher' }, { containers: [c('crash', 'echo boom; exit 1')] }),
    // More CPU than any node has: admission rejects it (Failed, OutOfcpu).
    base(
      'greedy',
      { app: 'greedy' },
      { containers: [{ ...c('hog', 'sleep 3600'), resources: { requests: { cpu: '1000' } } }] },
    ),
    base('job', { app: 'job' }, { restartPolicy: 'Never', containers: [c('work', 'echo working; sleep 5')] }),
    // Ready after ~5 s (readiness), restarted every ~35 s once /tmp/healthy is gone (liveness),
    // as the Kubernetes docs' liveness-exec example.
    base(
      'probe-exec',
      { app: 'probe-exec' },
      {
        containers: [
          {
            ...c(
              'app',
              'touch /tmp/healthy; sleep 5; touch /tmp/ready; sleep 25; rm -f /tmp/healthy; sleep 600',
            ),
            readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 2 },
            livenessProbe: {
              exec: { command: ['cat', '/tmp/healthy'] },
              periodSeconds: 2,
              failureThreshold: 2,
              terminationGracePeriodSeconds: 2,
            },
          },
        ],
      },
    ),
    // started (and so ready) only once the startup probe finds /tmp/started, after ~6 s.
    base(
      'probe-start',
      { app: 'probe-start' },
      {
        containers: [
          {
            ...c('app', 'sleep 6; touch /tmp/started; while true; do sleep 10; done'),
            startupProbe: {
              exec: { command: ['cat', '/tmp/started'] },
              periodSeconds: 2,
              failureThreshold: 15,
            },
          },
        ],
      },
    ),
    // tcpSocket startup probe (httpd listening), Ready once /www/ready exists (~4 s), restarted
    // once /www/healthz is gone (~30 s). busybox httpd serves the files on a real runtime; the
    // embedded runtime's containers serve their script's files the same way.
    base(
      'probe-net',
      { app: 'probe-net' },
      {
        containers: [
          {
            ...c(
              'httpd',
              'mkdir -p /www; touch /www/healthz; httpd -p 8080 -h /www; sleep 4; touch /www/ready; sleep 26; rm -f /www/healthz; sleep 600',
            ),
            ports: [{ name: 'http', containerPort: 8080 }],
            startupProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1, failureThreshold: 30 },
            readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 2 },
            livenessProbe: {
              httpGet: { path: '/healthz', port: 'http' },
              periodSeconds: 2,
              failureThreshold: 2,
              terminationGracePeriodSeconds: 2,
            },
          },
        ],
      },
    ),
    // grpc.health.v1 readiness: SERVING once the container created /tmp/grpc-serving (~3 s).
    ...(options.grpcProbe === false
      ? []
      : [
          base(
            'probe-grpc',
            { app: 'probe-grpc' },
            {
              containers: [
                {
                  ...c('app', 'sleep 3; touch /tmp/grpc-serving; while true; do sleep 10; done'),
                  ports: [{ name: 'grpc', containerPort: 9090 }],
                  readinessProbe: { grpc: { port: 9090 }, periodSeconds: 2 },
                },
              ],
            },
          ),
        ]),
  ];
}

/** The demo's Service (selects `web`, port 80 → 8080). */
export function demoService(): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: DEMO_NAMESPACE },
    spec: {
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

/** Creates the demo objects; ones that already exist are left alone. */
export async function createDemoObjects(
  api: ApiClient,
  nodeName: string,
  image: string,
  options: DemoPodOptions = {},
): Promise<void> {
  const create = async (path: string, obj: unknown) => {
    try {
      await api.create(path, obj);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  };
  await create(`/api/v1/namespaces/${DEMO_NAMESPACE}/services`, demoService());
  for (const pod of demoPods(nodeName, image, options))
    await create(`/api/v1/namespaces/${DEMO_NAMESPACE}/pods`, pod);
  // --- simulated memory pressure (demo-memory-pressure.ts) ---
  if (options.memoryPressure === true)
    await create(
      `/api/v1/namespaces/${DEMO_NAMESPACE}/pods`,
      demoMemoryHogPod(nodeName, image, DEMO_NAMESPACE),
    );
}

/** The demo's static pod (`--demo` puts it in a temp `--pod-manifest-path`): it shows up as its mirror pod `static-web-<node>`. */
export function demoStaticPodManifest(image: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: static-web
  namespace: ${DEMO_NAMESPACE}
  labels:
    app.kubernetes.io/part-of: nodeagent-demo
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: app
    image: ${image}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "while true; do sleep 10; done"]
`;
}

/** One line about a pod: phase or waiting reason, ready containers, restarts, IP. */
export function podSummary(pod: V1Pod): string {
  const statuses = pod.status?.containerStatuses ?? [];
  const total = pod.spec?.containers.length ?? 0;
  const ready = statuses.filter((s) => s.ready).length;
  const restarts = statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0);
  // As kubectl: a waiting reason, else the reason a container ended with, else the phase.
  const waiting =
    statuses.find((s) => s.state?.waiting?.reason)?.state?.waiting?.reason ??
    (pod.status?.phase === 'Running'
      ? statuses.find((s) => s.state?.terminated)?.state?.terminated?.reason
      : undefined);
  const initWaiting = pod.status?.initContainerStatuses?.find((s) => s.state?.running || s.state?.waiting);
  // As kubectl: the pod's own reason (e.g. OutOfcpu of a rejected pod) replaces the phase.
  let state = pod.status?.reason ?? pod.status?.phase ?? 'Pending';
  if (pod.metadata?.deletionTimestamp) state = 'Terminating';
  else if (initWaiting !== undefined && state === 'Pending') state = 'Init:0/1';
  else if (waiting !== undefined) state = waiting;
  return `pod ${(pod.metadata?.name ?? '').padEnd(11)} ${state.padEnd(17)} ready ${ready}/${total}  restarts ${restarts}  ip ${pod.status?.podIP ?? '-'}`;
}

/** Prints demo progress to `write` until the factory shuts down. */
export function watchDemo(factory: SharedInformerFactory, write: (line: string) => void): void {
  const last = new Map<string, string>();
  const emit = (key: string, line: string) => {
    if (last.get(key) === line) return;
    last.set(key, line);
    write(`[demo] ${line}`);
  };
  factory.pods<V1Pod & KubeObject>({ namespace: DEMO_NAMESPACE }).addEventHandler({
    onAdd: (pod) => emit(pod.metadata?.uid ?? '', podSummary(pod)),
    onUpdate: (_old, pod) => emit(pod.metadata?.uid ?? '', podSummary(pod)),
    onDelete: (obj) => emit(objectOf(obj).metadata?.uid ?? '', `pod ${objectOf(obj).metadata?.name} deleted`),
  });
  const slices = (slice: V1EndpointSlice) => {
    const service = slice.metadata?.labels?.['kubernetes.io/service-name'] ?? '?';
    const port = slice.ports?.[0]?.port;
    const eps = (slice.endpoints ?? []).map(
      (e) => `${e.addresses[0]}:${port ?? '?'}${e.conditions?.ready === false ? ' (not ready)' : ''}`,
    );
    emit(
      `slice/${slice.metadata?.name}`,
      `service ${service} endpoints: ${eps.length > 0 ? eps.join(', ') : '<none>'}`,
    );
  };
  factory.endpointSlices<V1EndpointSlice & KubeObject>({ namespace: DEMO_NAMESPACE }).addEventHandler({
    onAdd: slices,
    onUpdate: (_old, slice) => slices(slice),
  });
}
