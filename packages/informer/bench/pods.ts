/** Realistic ~2.5 KB pods for the benchmarks (labels, annotations, managedFields, status). */
export function benchPod(i: number): Record<string, unknown> {
  const name = `pod-${i.toString().padStart(6, '0')}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: `ns-${i % 20}`,
      labels: { app: `app-${i % 50}`, 'pod-template-hash': '7d9f8c6b5d', tier: 'backend' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2024-01-01T00:00:00Z', note: 'x'.repeat(80) },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `rs-${i % 50}`,
          uid: `00000000-0000-0000-0000-${i.toString().padStart(12, '0')}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2024-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': { 'f:containers': {} },
          },
        },
      ],
    },
    spec: {
      nodeName: `node-${i % 100}`,
      serviceAccountName: 'default',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/team/app:v1.2.3',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          env: Array.from({ length: 8 }, (_, k) => ({ name: `ENV_VAR_${k}`, value: `value-${k}-${i}` })),
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
          volumeMounts: [
            {
              name: 'kube-api-access',
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
            },
          ],
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
        },
      ],
      volumes: [
        {
          name: 'kube-api-access',
          projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] },
        },
      ],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      hostIP: `192.168.0.${i % 100}`,
      startTime: '2024-01-01T00:00:00Z',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastTransitionTime: '2024-01-01T00:00:00Z',
      })),
      containerStatuses: [
        {
          name: 'app',
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/team/app:v1.2.3',
          imageID: `registry.example.com/team/app@sha256:${'ab'.repeat(32)}`,
          containerID: `containerd://${'cd'.repeat(32)}`,
          started: true,
          state: { running: { startedAt: '2024-01-01T00:00:00Z' } },
        },
      ],
    },
  };
}
