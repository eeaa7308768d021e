/** Manifests and a capturing runner shared by the `nodeagent-proxy` CLI tests. */
import { type NfacctClient, NfacctError } from '@nodeagent/iptables';
import { type BuiltProxySnapshots, buildProxySnapshots } from '@nodeagent/proxy-state';
import { parseManifests } from '../src/cli/parse-manifests.js';
import { runProxyCli } from '../src/cli/run-proxy-cli.js';
import type { ModuleLoader } from '../src/index.js';

export const NODE = 'node-a';
export const NODE_IP = '192.168.0.2';
export const POD_CIDR = '10.100.0.0/16';

/**
 * YAML: a ClusterIP service with a local and a remote endpoint, a NodePort, a service without
 * endpoints.
 */
export const CLUSTER_YAML = `apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: web }
spec:
  clusterIP: 172.30.0.10
  ports: [{ name: http, port: 80, targetPort: 8080, protocol: TCP }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { namespace: ns1, name: web-1, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
ports: [{ name: http, port: 8080, protocol: TCP }]
endpoints:
  - { addresses: [10.100.1.2], nodeName: node-a }
  - { addresses: [10.100.2.2], nodeName: node-b }
---
apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: np }
spec:
  type: NodePort
  clusterIP: 172.30.0.20
  ports: [{ name: http, port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { namespace: ns1, name: np-1, labels: { kubernetes.io/service-name: np } }
addressType: IPv4
ports: [{ name: http, port: 8080 }]
endpoints:
  - { addresses: [10.100.2.2], nodeName: node-b }
---
apiVersion: v1
kind: Service
metadata: { namespace: ns1, name: empty }
spec:
  clusterIP: 172.30.0.11
  ports: [{ name: http, port: 80 }]
`;

/**
 * JSON (a v1 List): a LoadBalancer with source ranges and externalTrafficPolicy Local, with
 * one local and one remote endpoint.
 */
export const LB_JSON = JSON.stringify(
  {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { namespace: 'ns2', name: 'lb' },
        spec: {
          type: 'LoadBalancer',
          clusterIP: '172.30.0.30',
          externalTrafficPolicy: 'Local',
          healthCheckNodePort: 30999,
          loadBalancerSourceRanges: ['203.0.113.0/25'],
          ports: [{ name: 'https', port: 443, targetPort: 8443, nodePort: 30443, protocol: 'TCP' }],
        },
        status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { namespace: 'ns2', name: 'lb-1', labels: { 'kubernetes.io/service-name': 'lb' } },
        addressType: 'IPv4',
        ports: [{ name: 'https', port: 8443, protocol: 'TCP' }],
        endpoints: [
          { addresses: ['10.100.1.3'], nodeName: 'node-a' },
          { addresses: ['10.100.2.3'], nodeName: 'node-b' },
        ],
      },
    ],
  },
  null,
  2,
);

/** The files the tests read, by name. */
export const FILES: Readonly<Record<string, string>> = {
  'cluster.yaml': CLUSTER_YAML,
  'lb.json': LB_JSON,
};

/** The objects of `texts` built into snapshots the way the CLI does (for library references). */
export function referenceSnapshots(texts: readonly string[], nodeIPs = [NODE_IP]): BuiltProxySnapshots {
  const parsed = texts.map((t) => parseManifests(t));
  return buildProxySnapshots({
    nodeName: NODE,
    nodeIPs,
    services: parsed.flatMap((p) => p.services),
    endpointSlices: parsed.flatMap((p) => p.endpointSlices),
  });
}

/** What one CLI run produced. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** An nfacct client of a kernel without nfnetlink_acct: `--nfacct auto` resolves to off. */
export const NO_NFACCT: NfacctClient = {
  ensure: async (name) => {
    throw new NfacctError(['nfacct', 'add', name], 'Operation not supported');
  },
  list: async () => {
    throw new NfacctError(['nfacct', 'list'], 'Operation not supported');
  },
};

/** An in-memory nfacct client (counters created on ensure). */
export function memoryNfacct(): NfacctClient & { readonly names: Set<string> } {
  const names = new Set<string>();
  return {
    names,
    ensure: async (name) => void names.add(name),
    list: async () => [...names].map((name) => ({ name, packets: 0n, bytes: 0n })),
  };
}

/**
 * Runs the CLI in-process with in-memory files (`-` reads `stdin`); the node has no nfacct
 * unless `opts.nfacct` is given.
 */
export async function runCli(
  argv: readonly string[],
  opts: {
    files?: Readonly<Record<string, string>>;
    env?: NodeJS.ProcessEnv;
    stdin?: string;
    nfacct?: NfacctClient;
    /** Imports backend packages (tests: one that fails for packages "not installed"). */
    load?: ModuleLoader;
  } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const files = opts.files ?? FILES;
  const code = await runProxyCli(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: opts.env ?? {},
    nfacct: () => opts.nfacct ?? NO_NFACCT,
    ...(opts.load ? { load: opts.load } : {}),
    readFile: async (path) => {
      if (path === '-' && opts.stdin !== undefined) return opts.stdin;
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return text;
    },
  });
  return { code, stdout, stderr };
}

/** The common arguments: both files, node-a, its IP and the pod CIDR. */
export const BASE_ARGS = [
  '-f',
  'cluster.yaml',
  '-f',
  'lb.json',
  '--node-name',
  NODE,
  '--node-ip',
  NODE_IP,
  '--cluster-cidr',
  POD_CIDR,
] as const;

/** The local-traffic detector the CLI derives from `--cluster-cidr`. */
export const DETECTOR = { mode: 'ClusterCIDR', cidr: POD_CIDR } as const;
