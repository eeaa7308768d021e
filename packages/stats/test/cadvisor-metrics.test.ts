// Expectations from cAdvisor's lib/metrics/prometheus.go and testdata/prometheus_metrics
// (names, HELP, TYPE, extra labels, timestamps) and the kubelet's containerPrometheusLabelsFunc
// (container, id, image, name, namespace, pod; pod cgroups labelled with their pod).
import { afterEach, describe, expect, it } from 'vitest';
import { createStatsProvider, renderCadvisorMetrics } from '../src/index.js';
import { type FakeCri, IMAGE, runPod, startFakeCri, uidOf } from './support/fake-cri.js';
import { FakeNode } from './support/fake-node.js';

const MiB = 1024 * 1024;
let h: FakeCri | undefined;
let node: FakeNode | undefined;
afterEach(async () => {
  await h?.close();
  await node?.cleanup();
});

describe('renderCadvisorMetrics', () => {
  it('labels container, pod and raw cgroups as the kubelet does and writes cAdvisor families', async () => {
    h = await startFakeCri();
    node = await FakeNode.create('v2');
    const uid = uidOf(5);
    const { containerIds } = await runPod(h, 'web', uid, ['app'], 'shop');
    const cid = containerIds[0] as string;
    const pod = `/kubepods/besteffort/pod${uid}`;
    await node.cgroup('/', { cpuUsageNs: 100e9, memoryUsage: 0, inactiveFile: 0, anon: 0 });
    await node.cgroup(pod, {
      cpuUsageNs: 3e9,
      memoryUsage: 10 * MiB,
      inactiveFile: 0,
      anon: 1,
      procs: [77],
      pressureTotalUs: 3_000_000,
    });
    await node.cgroup(`${pod}/${cid}`, {
      cpuUsageNs: 2.5e9,
      userNs: 2e9,
      systemNs: 0.5e9,
      memoryUsage: 8 * MiB,
      inactiveFile: 2 * MiB,
      anon: 5 * MiB,
      oomKills: 1,
      pids: 4,
      cpuQuotaUs: 50_000,
    });
    await node.netDev(77, [['eth0', 1_000_000, 42]]);
    const stats = createStatsProvider({
      nodeName: 'n',
      cri: h.cri,
      clock: h.clock,
      cgroupRoot: node.cgroupRoot,
      procRoot: node.procRoot,
      statfs: async () => ({ bsize: 4096, blocks: 100, bfree: 50, bavail: 40, files: 10, ffree: 5 }),
    });
    await stats.housekeep();
    const text = renderCadvisorMetrics(await stats.cadvisorSnapshot());
    const ts = h.clock.now();
    // Label pairs sorted by name, as client_golang writes them.
    const L = (base: Record<string, string>, extra: Record<string, string> = {}): string =>
      Object.entries({ ...base, ...extra })
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}="${v}"`)
        .join(',');
    const cb = {
      container: 'app',
      id: `${pod}/${cid}`,
      image: IMAGE,
      name: cid,
      namespace: 'shop',
      pod: 'web',
    };
    const c = L(cb);
    expect(text).toContain(
      '# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.\n# TYPE container_cpu_usage_seconds_total counter\n',
    );
    expect(text).toContain(`container_cpu_usage_seconds_total{${L(cb, { cpu: 'total' })}} 2.5 ${ts}\n`);
    expect(text).toContain(`container_cpu_user_seconds_total{${c}} 2 ${ts}\n`);
    expect(text).toContain(`container_cpu_cfs_periods_total{${c}} 0 ${ts}\n`);
    expect(text).toContain(`container_memory_working_set_bytes{${c}} 6.291456e+06 ${ts}\n`);
    expect(text).toContain(`container_memory_usage_bytes{${c}} 8.388608e+06 ${ts}\n`);
    expect(text).toContain(`container_memory_rss{${c}} 5.24288e+06 ${ts}\n`);
    expect(text).toContain(
      `container_memory_failures_total{${L(cb, { failure_type: 'pgfault', scope: 'container' })}} 0 ${ts}\n`,
    );
    expect(text).toContain(`container_oom_events_total{${c}} 1 ${ts}\n`);
    expect(text).toContain(`container_threads{${c}} 4 ${ts}\n`);
    expect(text).toContain(`container_threads_max{${c}} 0 ${ts}\n`);
    expect(text).toContain(`container_spec_cpu_quota{${c}} 50000\n`);
    // The writable layer's mount point resolved to its device through mountinfo.
    expect(text).toContain(`container_fs_usage_bytes{${L(cb, { device: '/dev/sda1' })}} 8192 ${ts}\n`);
    expect(text).toContain(`container_last_seen{${c}} 1.7e+09 ${ts}\n`);
    // The pod cgroup: no container name or image, but its pod (GetPodByCgroupfs).
    const pb = { container: '', id: pod, image: '', name: '', namespace: 'shop', pod: 'web' };
    expect(text).toContain(
      `container_network_receive_bytes_total{${L(pb, { interface: 'eth0' })}} 1e+06 ${ts}\n`,
    );
    expect(text).toContain(
      `container_network_transmit_bytes_total{${L(pb, { interface: 'eth0' })}} 42 ${ts}\n`,
    );
    // PSI totals (µs) in seconds: some = waiting, full = stalled.
    expect(text).toContain(`container_pressure_cpu_waiting_seconds_total{${L(pb)}} 3 ${ts}\n`);
    expect(text).toContain(`container_pressure_io_stalled_seconds_total{${L(pb)}} 1.5 ${ts}\n`);
    expect(text).toContain(
      '# HELP container_pressure_memory_stalled_seconds_total Total time duration no tasks in the container could make progress due to memory congestion.\n',
    );
    expect(text).not.toContain(`container_pressure_cpu_waiting_seconds_total{${c}}`);
    // The root: nodefs on its device, the host's interfaces.
    const rb = { container: '', id: '/', image: '', name: '', namespace: '', pod: '' };
    expect(text).toContain(`container_fs_limit_bytes{${L(rb, { device: '/dev/sda1' })}} 409600 ${ts}\n`);
    expect(text).toContain(`container_cpu_usage_seconds_total{${L(rb, { cpu: 'total' })}} 100 ${ts}\n`);
    expect(text).toContain('# TYPE container_scrape_error gauge\ncontainer_scrape_error 0\n');
    // Gatherer order: families sorted by name.
    const names = [...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1] as string);
    expect(names).toEqual([...names].sort());
  });
});
