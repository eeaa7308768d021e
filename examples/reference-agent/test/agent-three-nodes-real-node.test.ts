// Three real nodes on one machine, no coordination between their agents (issue 13, "Many
// nodes"): three node network namespaces joined by a bridge (test/support/node-fabric.ts),
// each with its own pod CIDR, private containerd and CNI bridge, and each node's pod CIDR
// routed via that node; one standalone mini-apiserver (loopback, kubeconfig file, the
// EndpointSlice controller and the node lifecycle controller with a short grace); one agent
// process per node (`--kubeconfig`, `--container-runtime-endpoint` of its containerd,
// `--hostname-override`, `--node-ip` on the inter-node link) with kube-proxy in it programming
// its node's namespace (`--proxy-mode iptables|nftables --proxy-render-only=false --proxy-netns`;
// node-3, the client's node, runs nftables, node-1 and node-2 iptables).
// - Pods placed by `spec.nodeName`: busybox httpd on node-1 and node-2 behind a ClusterIP
//   Service, a client on node-3; real TCP from the client's pod (a CRI exec of wget) to the
//   ClusterIP lands on both backends.
// - kill -9 of node-1's agent: the other agents and node-3's traffic are unaffected, node-1's
//   pod keeps running in its containerd, node-1 goes NotReady once its lease is older than the
//   grace period, its pod is marked not ready and leaves the Service's ready endpoints (as
//   upstream's node lifecycle controller does), so node-3's traffic lands on node-2 only.
// - node-1's agent restarted: it adopts its pod (same sandbox and container, restartCount 0),
//   the Node goes Ready and the pod Ready, traffic lands on both backends again.
// Fails under CI=true when root, netns, containerd, runc, CNI, iptables, nft, conntrack or busybox
// are missing.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  V1EndpointSlice,
  V1Lease,
  V1Node,
  V1Pod,
  V1Service,
  V1ServiceSpec,
} from '@kubernetes/client-node';
import { createTestCgroupRoot, type TestCgroupRoot } from '@nodeagent/cgroups/testing';
import { ContainerState, type CriClient, createCriClient } from '@nodeagent/cri';
import { type MiniApiServer, startMiniApiServer } from '@nodeagent/mini-apiserver';
import { joinNodeSandboxes, type NodeFabric } from '@nodeagent/test-support/node-fabric';
import { type NodeSandbox, startNodeSandbox } from '@nodeagent/test-support/node-sandbox';
import { describeRealNode } from '@nodeagent/test-support/real-node';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { type AgentProcess, bundleAgent, freePort, repoRoot, startAgentProcess } from './agent-process.js';
import { makePod, shContainer, waitFor } from './helpers.js';

const NODES = ['node-1', 'node-2', 'node-3'] as const;
/** Each node's kube-proxy mode: the client's node-3 runs nftables, the backends' nodes iptables. */
const PROXY_MODES = ['iptables', 'iptables', 'nftables'] as const;
const CLUSTER_CIDR = '10.244.0.0/16';
const podCidrOf = (i: number) => `10.244.${i + 1}.0/24`;
/** The kubelet's lease duration here (config file): renewed every second. */
const LEASE_SECONDS = 4;
/** The node lifecycle controller's grace and period (kube-controller-manager's `--node-monitor-*`). */
const GRACE_MS = 4_000;
const MONITOR_PERIOD_MS = 500;
const REQUESTS = 16;

interface Node {
  readonly name: string;
  readonly sandbox: NodeSandbox;
  readonly cri: CriClient;
  readonly cgroupRoot: TestCgroupRoot;
  readonly args: string[];
  agent?: AgentProcess;
  /** Output of this node's earlier (killed) agents. */
  earlier: string;
}

describeRealNode(
  'three real nodes, one agent each: a ClusterIP across nodes, one agent killed and restarted',
  ['root', 'netns', 'containerd', 'runc', 'cni', 'busybox', 'iptables', 'nft', 'conntrack'],
  () => {
    const nodes: Node[] = [];
    let fabric: NodeFabric | undefined;
    let api: MiniApiServer;
    let bundleDir: string;
    let bundle: string;

    const getPod = (name: string) => api.store.tryGet('pods', 'default', name) as V1Pod | undefined;
    const getNode = (name: string) => api.store.tryGet('nodes', undefined, name) as V1Node | undefined;
    const readyOf = (n: V1Node | undefined) => n?.status?.conditions?.find((c) => c.type === 'Ready');
    const podReady = (p: V1Pod | undefined) =>
      p?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    const containerIdOf = (p: V1Pod | undefined) =>
      p?.status?.containerStatuses?.[0]?.containerID?.replace('containerd://', '');
    const node = (i: number) => nodes[i] as Node;

    const startAgent = async (n: Node) => {
      if (n.agent) n.earlier += n.agent.output();
      n.agent = await startAgentProcess(bundle, n.args, n.name, 90_000);
    };
    /** The ready endpoints' pod names of the Service `web`. */
    const readyEndpoints = () =>
      (api.store.list('endpointslices', 'default') as unknown as V1EndpointSlice[])
        .filter((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === 'web')
        .flatMap((s) => s.endpoints ?? [])
        .filter((e) => e.conditions?.ready === true)
        .map((e) => e.targetRef?.name ?? '')
        .sort();
    let clientContainer = '';
    /** `count` HTTP requests from the client pod on node-3 to `url`: each answer's body, or FAIL. */
    const requestsFromNode3 = async (url: string, count = REQUESTS): Promise<string[]> => {
      const script = `for i in $(seq ${count}); do timeout 3 wget -q -O- ${url} || echo FAIL; done`;
      const r = await node(2).cri.runtime.execSync(
        { containerId: clientContainer, cmd: ['sh', '-c', script], timeout: BigInt(count * 4 + 5) },
        { timeoutMs: (count * 4 + 10) * 1000 },
      );
      return r.stdout.toString().trim().split('\n');
    };
    const containersOf = async (n: Node, uid: string) =>
      (await n.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } }))
        .containers;
    const sandboxesOf = async (n: Node, uid: string) =>
      (await n.cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } }))
        .items;

    beforeAll(async () => {
      bundleDir = join(repoRoot, 'node_modules', '.cache', `nodeagent-three-nodes-test-${process.pid}`);
      bundle = await bundleAgent(bundleDir);
      const sandboxes: NodeSandbox[] = [];
      for (const [i] of NODES.entries()) {
        sandboxes.push(await startNodeSandbox({ name: 'threenodes', podCidr: podCidrOf(i) }));
      }
      fabric = await joinNodeSandboxes(sandboxes, { name: 'threenodes' });
      const stateDir = sandboxes[0]?.rootDir as string;
      api = await startMiniApiServer({
        kubeconfigPath: join(stateDir, 'kubeconfig'),
        endpointSliceController: true,
        nodeLifecycleController: true,
        nodeMonitorGracePeriodMs: GRACE_MS,
        nodeMonitorPeriodMs: MONITOR_PERIOD_MS,
        nodeStartupGracePeriodMs: 30_000,
      });
      for (const [i, name] of NODES.entries()) {
        const sandbox = sandboxes[i] as NodeSandbox;
        const cgroupRoot = await createTestCgroupRoot();
        const config = join(sandbox.rootDir, 'kubelet-config.yaml');
        await writeFile(
          config,
          `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nnodeLeaseDurationSeconds: ${LEASE_SECONDS}\n`,
        );
        await mkdir(join(sandbox.rootDir, 'kubelet'), { recursive: true });
        const args = [
          '--config',
          config,
          '--kubeconfig',
          join(stateDir, 'kubeconfig'),
          '--container-runtime-endpoint',
          sandbox.criEndpoint,
          '--hostname-override',
          name,
          '--node-ip',
          fabric.nodeIps[i] as string,
          '--pod-cidr',
          sandbox.podCidr,
          '--root-dir',
          join(sandbox.rootDir, 'kubelet'),
          '--pod-logs-root',
          sandbox.podLogRoot,
          '--cgroup-root',
          cgroupRoot.cgroupRoot,
          '--address',
          '127.0.0.1',
          '--port',
          String(await freePort()),
          '--healthz-port',
          '0',
          '--node-status-update-frequency',
          '1s',
          '--proxy-mode',
          PROXY_MODES[i] as string,
          '--proxy-render-only=false',
          '--proxy-netns',
          sandbox.netns.name,
          '--cluster-cidr',
          CLUSTER_CIDR,
          // Traffic from this node's pods is "local", not from any pod of the cluster: with
          // ClusterCIDR detection (kube-proxy's default), node-1 would treat node-3's pod
          // connecting to node-1's externalTrafficPolicy=Local NodePort as its own, send it
          // to any endpoint without SNAT, and web-2's answers would bypass node-1 and be dropped.
          '--detect-local-mode',
          'NodeCIDR',
          '--proxy-healthz-bind-address',
          '127.0.0.1:0',
          '--proxy-metrics-bind-address=',
        ];
        nodes.push({
          name,
          sandbox,
          cri: createCriClient(sandbox.criEndpoint),
          cgroupRoot,
          args,
          earlier: '',
        });
      }
      // The three agents start side by side, as three machines would.
      await Promise.all(nodes.map(startAgent));
    }, 240_000);

    afterAll(async () => {
      if (process.env.NODEAGENT_TEST_LOG) {
        for (const n of nodes)
          console.error(`--- agent ${n.name} output ---\n${n.earlier}${n.agent?.output()}`);
      }
      for (const n of nodes) {
        if (n.agent?.alive()) {
          n.agent.proc.kill('SIGKILL');
          await n.agent.exited();
        }
      }
      await api?.stop();
      for (const n of nodes) n.cri.close();
      const problems: unknown[] = [];
      for (const n of nodes) await n.sandbox.stop().catch((e) => problems.push(e));
      await fabric?.stop().catch((e) => problems.push(e));
      for (const n of nodes) await n.cgroupRoot.remove().catch((e) => problems.push(e));
      if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
      if (problems.length > 0)
        throw new AggregateError(problems, 'three-node teardown left something behind');
    }, 120_000);

    it('a ClusterIP over pods on two nodes from a pod on the third; kill -9 of one agent; restart adopts', async () => {
      onTestFailed(() => {
        for (const n of nodes)
          console.error(`--- agent ${n.name} output ---\n${n.agent?.output().slice(-6000)}`);
      });
      // --- three Nodes, each Ready, with its node IP ---
      for (const [i, name] of NODES.entries()) {
        const n = await waitFor(
          `${name} Ready`,
          () => {
            const x = getNode(name);
            return readyOf(x)?.status === 'True' ? x : undefined;
          },
          60_000,
        );
        expect(n.status?.addresses).toContainEqual({ type: 'InternalIP', address: fabric?.nodeIps[i] });
      }

      // --- pods spread by spec.nodeName (no Deployment) and a ClusterIP Service ---
      const web = (name: string, nodeName: string): V1Pod => {
        const pod = makePod(name, nodeName, [
          shContainer(
            'httpd',
            node(0).sandbox.imageRef,
            'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www',
          ),
        ]);
        pod.metadata = { ...pod.metadata, labels: { app: 'web' } };
        return pod;
      };
      const create = (pod: V1Pod) =>
        api.store.create('pods', pod as never, { admit: true }) as unknown as V1Pod;
      const web1 = create(web('web-1', 'node-1'));
      create(web('web-2', 'node-2'));
      create(
        makePod('client', 'node-3', [
          shContainer('client', node(2).sandbox.imageRef, 'while true; do sleep 1; done'),
        ]),
      );
      const webService = (name: string, spec: V1ServiceSpec = {}) =>
        api.store.create(
          'services',
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name, namespace: 'default' },
            spec: {
              type: 'NodePort',
              ...spec,
              selector: { app: 'web' },
              ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
            },
          } as never,
          { admit: true },
        ) as unknown as V1Service;
      const svc = webService('web');
      const local = webService('web-local', { externalTrafficPolicy: 'Local' });
      const clusterIP = svc.spec?.clusterIP ?? '';
      expect(clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const running = await waitFor(
        'web-1, web-2 and client Running and Ready',
        () => {
          const pods = ['web-1', 'web-2', 'client'].map(getPod);
          return pods.every((p) => p?.status?.phase === 'Running' && podReady(p))
            ? (pods as V1Pod[])
            : undefined;
        },
        90_000,
      );
      // Each pod has an IP of its own node's pod CIDR (each node's own CNI bridge and IPAM).
      for (const [k, i] of [0, 1, 2].entries()) {
        const ip = running[k]?.status?.podIP ?? '';
        expect(ip.startsWith(podCidrOf(i).replace('0/24', '')), `${running[k]?.metadata?.name} ${ip}`).toBe(
          true,
        );
        expect(running[k]?.status?.hostIP).toBe(fabric?.nodeIps[i]);
      }
      clientContainer = containerIdOf(running[2]) ?? '';
      const web1Container = containerIdOf(running[0]) ?? '';
      const web2Container = containerIdOf(running[1]) ?? '';
      expect(web1Container).toMatch(/^[0-9a-f]{64}$/);
      const web1Uid = web1.metadata?.uid ?? '';
      const web1Sandboxes = (await sandboxesOf(node(0), web1Uid)).map((s) => s.id);
      expect(web1Sandboxes).toHaveLength(1);
      await waitFor('both endpoints ready', () => readyEndpoints().join() === 'web-1,web-2', 30_000);

      // --- real TCP from node-3's pod to the ClusterIP lands on both backends ---
      const url = `http://${clusterIP}/`;
      // Until every node's kube-proxy has programmed both endpoints (each syncs at most once a
      // second, --iptables-min-sync-period) and both httpd answer.
      const rulesOf = async (i: number) =>
        (
          await node(i).sandbox.run(
            PROXY_MODES[i] === 'nftables'
              ? ['nft', 'list', 'table', 'ip', 'kube-proxy']
              : ['iptables-save', '-t', 'nat'],
          )
        ).stdout;
      const node3Rules = () => rulesOf(2);
      const podIps = running.map((p) => p.status?.podIP ?? '');
      /** Both web pods are endpoints in node `i`'s kube-proxy rules. */
      const bothEndpointsIn = async (i: number) => {
        const rules = await rulesOf(i);
        return rules.includes(`${podIps[0]}:8080`) && rules.includes(`${podIps[1]}:8080`);
      };
      for (const i of [0, 1, 2]) {
        await waitFor(`both endpoints in ${NODES[i]}'s rules`, () => bothEndpointsIn(i), 30_000);
      }
      for (const ip of podIps.slice(0, 2)) {
        await waitFor(
          `httpd on ${ip}`,
          async () => (await requestsFromNode3(`http://${ip}:8080/`, 1))[0] !== 'FAIL',
          30_000,
        );
      }
      const before = await requestsFromNode3(url);
      expect(
        before.filter((b) => b !== 'web-1' && b !== 'web-2'),
        before.join(),
      ).toEqual([]);
      expect(new Set(before), before.join()).toEqual(new Set(['web-1', 'web-2']));
      // node-3's rules are kube-proxy's nftables ones: the ClusterIP in the service-ips map.
      const rules = await node3Rules();
      expect(rules, rules).toMatch(
        new RegExp(
          `${clusterIP.replaceAll('.', '\\.')} \\. tcp \\. 80 : goto service-[A-Z2-7]{8}-default/web/tcp/http`,
        ),
      );
      // node-1 and node-2 run iptables mode: their own namespaces hold the same Service.
      for (const i of [0, 1]) {
        expect(await rulesOf(i)).toMatch(
          /^-A KUBE-SERVICES .*--comment "default\/web:http cluster IP".*-j KUBE-SVC-[A-Z2-7]{16}$/m,
        );
      }

      // The NodePort on node-1's IP (iptables mode there), from node-3's pod: node-1 sends some
      // connections to web-2 on node-2, masqueraded to its own IP so the answers come back
      // through it (externalTrafficPolicy Cluster).
      const nodePort = svc.spec?.ports?.[0]?.nodePort;
      expect(nodePort).toBeGreaterThanOrEqual(30000);
      const viaNode1 = await requestsFromNode3(`http://${fabric?.nodeIps[0]}:${nodePort}/`);
      expect(new Set(viaNode1), viaNode1.join()).toEqual(new Set(['web-1', 'web-2']));
      // ... and on node-3's own IP (nftables there).
      const viaNode3 = await requestsFromNode3(`http://${fabric?.nodeIps[2]}:${nodePort}/`);
      expect(new Set(viaNode3), viaNode3.join()).toEqual(new Set(['web-1', 'web-2']));
      // externalTrafficPolicy Local: each node's kube-proxy picks the endpoints on its own node
      // (EndpointSlice nodeName = its --hostname-override). (Needs --detect-local-mode
      // NodeCIDR, see the agents' flags.)
      const localPort = local.spec?.ports?.[0]?.nodePort;
      for (const i of [0, 1]) {
        const answers = await requestsFromNode3(`http://${fabric?.nodeIps[i]}:${localPort}/`, 6);
        expect(answers, `${answers.join()}\n${await rulesOf(i)}`).toEqual(Array(6).fill(`web-${i + 1}`));
      }
      // On node-3 itself the client is one of the node's own pods: kube-proxy short-circuits
      // pod traffic to the Service's cluster endpoints, though node-3 has no local one.
      const ownNode = await requestsFromNode3(`http://${fabric?.nodeIps[2]}:${localPort}/`, 6);
      expect(
        ownNode.filter((b) => b !== 'web-1' && b !== 'web-2'),
        ownNode.join(),
      ).toEqual([]);

      // --- kill -9 node-1's agent ---
      const killedAt = Date.now();
      node(0).agent?.proc.kill('SIGKILL');
      expect(await node(0).agent?.exited()).toBe('SIGKILL');
      // node-1's last heartbeat: its Lease's renewTime or its Ready condition's lastHeartbeatTime.
      const lease = api.store.tryGet('leases', 'kube-node-lease', 'node-1') as V1Lease | undefined;
      const lastBeat = Math.max(
        new Date(lease?.spec?.renewTime ?? 0).getTime(),
        new Date(readyOf(getNode('node-1'))?.lastHeartbeatTime ?? 0).getTime(),
      );
      expect(lastBeat).toBeGreaterThan(killedAt - 10_000);
      // Traffic from node-3 keeps flowing while node-1 has no agent (its pod still serves).
      const during = await requestsFromNode3(url);
      expect(
        during.filter((b) => b === 'FAIL'),
        during.join(),
      ).toEqual([]);

      // node-1 goes NotReady (Unknown: the kubelet stopped posting) once its lease is older than the grace.
      const notReady = await waitFor(
        'node-1 NotReady',
        () => {
          const c = readyOf(getNode('node-1'));
          return c?.status === 'Unknown' ? c : undefined;
        },
        GRACE_MS + LEASE_SECONDS * 1000 + 20_000,
      );
      const notReadyAt = Date.now();
      const notReadyAfterMs = notReadyAt - killedAt;
      expect(notReady).toMatchObject({
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
      });
      // Not before the grace period has passed since the last heartbeat.
      expect(notReadyAt - lastBeat).toBeGreaterThanOrEqual(GRACE_MS);
      // The other nodes are untouched: Ready, their agents running.
      for (const i of [1, 2]) {
        expect(readyOf(getNode(NODES[i] as string))?.status).toBe('True');
        expect(node(i).agent?.alive()).toBe(true);
      }
      // ... and taints it unreachable (NoSchedule, and NoExecute: the zone has healthy nodes).
      const unreachableTaints = () =>
        (getNode('node-1')?.spec?.taints ?? [])
          .filter((t) => t.key === 'node.kubernetes.io/unreachable')
          .map((t) => t.effect)
          .sort()
          .join();
      await waitFor(
        'node-1 tainted unreachable',
        () => unreachableTaints() === 'NoExecute,NoSchedule',
        15_000,
      );
      // The controller marks node-1's pod not ready; the EndpointSlice drops it from the ready endpoints.
      await waitFor('web-1 not ready', () => !podReady(getPod('web-1')), 15_000);
      await waitFor('web-1 out of the ready endpoints', () => readyEndpoints().join() === 'web-2', 15_000);
      // node-1's pod keeps running in its containerd, the same container.
      expect((await containersOf(node(0), web1Uid)).map((c) => [c.id, c.state])).toEqual([
        [web1Container, ContainerState.CONTAINER_RUNNING],
      ]);
      // node-3 now sends every connection to the surviving endpoint.
      await waitFor(
        'node-3 programmed web-2 only',
        async () => {
          return !(await node3Rules()).includes(`${podIps[0]}:8080`);
        },
        20_000,
      );
      const after = await requestsFromNode3(url);
      expect(after, after.join()).toEqual(Array(REQUESTS).fill('web-2'));
      // node-1's pod itself still answers (its node's data plane needs no agent).
      expect(await requestsFromNode3(`http://${podIps[0]}:8080/`, 1)).toEqual(['web-1']);

      // --- restart node-1's agent: it adopts its pod and the Node goes Ready ---
      const restartAt = Date.now();
      await startAgent(node(0));
      await waitFor('node-1 Ready again', () => readyOf(getNode('node-1'))?.status === 'True', 60_000);
      const readyAfterMs = Date.now() - restartAt;
      // The taints go (the restarted agent admitted web-1 under the NoExecute one: the pod
      // tolerates it for 300 s, the DefaultTolerationSeconds the API server added).
      await waitFor('node-1 untainted', () => unreachableTaints() === '', 15_000);
      const adopted = await waitFor(
        'web-1 Ready again',
        () => {
          const p = getPod('web-1');
          return podReady(p) ? p : undefined;
        },
        60_000,
      );
      expect(adopted.status?.containerStatuses?.[0]).toMatchObject({
        containerID: `containerd://${web1Container}`,
        restartCount: 0,
        ready: true,
      });
      expect((await sandboxesOf(node(0), web1Uid)).map((s) => s.id)).toEqual(web1Sandboxes);
      expect((await containersOf(node(0), web1Uid)).map((c) => c.id)).toEqual([web1Container]);
      await waitFor('both endpoints ready again', () => readyEndpoints().join() === 'web-1,web-2', 30_000);
      await waitFor("both endpoints in node-3's rules again", () => bothEndpointsIn(2), 30_000);
      const again = await requestsFromNode3(url);
      expect(new Set(again), again.join()).toEqual(new Set(['web-1', 'web-2']));

      // Nothing restarted anywhere.
      expect(getPod('web-2')?.status?.containerStatuses?.[0]).toMatchObject({
        containerID: `containerd://${web2Container}`,
        restartCount: 0,
      });
      expect(getPod('client')?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
      expect(nodes.every((n) => n.agent?.alive())).toBe(true);
      console.log(
        `three nodes: node-1 NotReady ${notReadyAfterMs} ms after its agent was killed, ${notReadyAt - lastBeat} ms after its last heartbeat (grace ${GRACE_MS} ms, lease ${LEASE_SECONDS} s), Ready ${readyAfterMs} ms after the restart`,
      );
    }, 240_000);
  },
);
