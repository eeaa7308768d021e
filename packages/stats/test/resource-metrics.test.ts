// Expectations from upstream pkg/kubelet/metrics/collectors/resource_metrics_test.go (names,
// HELP with stability, label order, sort order, timestamps) and client_golang's value format.
import { describe, expect, it } from 'vitest';
import { formatPromValue, renderResourceMetrics, type Summary } from '../src/index.js';

// Upstream's testTime, at the second precision metav1.Time JSON keeps.
const T = '2021-06-22T21:11:18Z';
const T_MS = Date.parse(T);

describe('formatPromValue (Go %g, shortest)', () => {
  it.each([
    [10, '10'],
    [1000, '1000'],
    [0.5, '0.5'],
    [1e6, '1e+06'],
    [14454784, '1.4454784e+07'],
    [1.6243962483020916e9, '1.6243962483020916e+09'],
    [7e-9, '7e-09'],
    [0.0001, '0.0001'],
    [123456, '123456'],
    [0, '0'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, '+Inf'],
  ])('%s → %s', (v, text) => {
    expect(formatPromValue(v)).toBe(text);
  });
});

describe('renderResourceMetrics', () => {
  it('renders containers of two pods sorted by label values, with start time and swap limit = available + usage', () => {
    const summary: Summary = {
      node: { nodeName: 'n', startTime: T },
      pods: [
        {
          podRef: { name: 'pod_a', namespace: 'namespace_a', uid: 'a' },
          startTime: T,
          containers: [
            {
              name: 'container_a',
              startTime: '2021-06-22T21:10:48Z',
              cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 },
              memory: { time: T, workingSetBytes: 1000, usageBytes: 2000 },
              swap: { time: T, swapUsageBytes: 1000, swapAvailableBytes: 9000 },
            },
            {
              name: 'container_b',
              startTime: '2021-06-22T21:09:18Z',
              cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 },
              memory: { time: T, workingSetBytes: 1000 },
            },
          ],
        },
        {
          podRef: { name: 'pod_b', namespace: 'namespace_b', uid: 'b' },
          startTime: T,
          containers: [
            {
              name: 'container_a',
              startTime: '2021-06-22T21:01:18Z',
              cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 },
              memory: { time: T, workingSetBytes: 1000, usageBytes: 2000 },
            },
          ],
        },
      ],
    };
    expect(renderResourceMetrics(summary)).toBe(
      [
        '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
        '# TYPE container_cpu_usage_seconds_total counter',
        `container_cpu_usage_seconds_total{container="container_a",namespace="namespace_a",pod="pod_a"} 10 ${T_MS}`,
        `container_cpu_usage_seconds_total{container="container_a",namespace="namespace_b",pod="pod_b"} 10 ${T_MS}`,
        `container_cpu_usage_seconds_total{container="container_b",namespace="namespace_a",pod="pod_a"} 10 ${T_MS}`,
        '# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes',
        '# TYPE container_memory_working_set_bytes gauge',
        `container_memory_working_set_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 ${T_MS}`,
        `container_memory_working_set_bytes{container="container_a",namespace="namespace_b",pod="pod_b"} 1000 ${T_MS}`,
        `container_memory_working_set_bytes{container="container_b",namespace="namespace_a",pod="pod_a"} 1000 ${T_MS}`,
        '# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds',
        '# TYPE container_start_time_seconds gauge',
        'container_start_time_seconds{container="container_a",namespace="namespace_a",pod="pod_a"} 1.624396248e+09',
        'container_start_time_seconds{container="container_a",namespace="namespace_b",pod="pod_b"} 1.624395678e+09',
        'container_start_time_seconds{container="container_b",namespace="namespace_a",pod="pod_a"} 1.624396158e+09',
        '# HELP container_swap_limit_bytes [ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems',
        '# TYPE container_swap_limit_bytes gauge',
        `container_swap_limit_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 10000 ${T_MS}`,
        '# HELP container_swap_usage_bytes [ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems',
        '# TYPE container_swap_usage_bytes gauge',
        `container_swap_usage_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 ${T_MS}`,
        '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
        '# TYPE resource_scrape_error gauge',
        'resource_scrape_error 0',
        '',
      ].join('\n'),
    );
  });

  it('renders node and pod series, skips nil values, and stamps node swap with the memory time', () => {
    const swapTime = '2021-06-22T21:11:28Z';
    const text = renderResourceMetrics({
      node: {
        nodeName: 'n',
        startTime: T,
        cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 },
        memory: { time: T, workingSetBytes: 1000 },
        swap: { time: swapTime, swapUsageBytes: 500 },
      },
      pods: [
        {
          podRef: { name: 'pod_a', namespace: 'namespace_a', uid: 'a' },
          startTime: T,
          containers: [],
          cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 },
          memory: { time: T, workingSetBytes: 1000 },
          swap: { time: T, swapUsageBytes: 5000 },
        },
        {
          podRef: { name: 'pod_b', namespace: 'namespace_b', uid: 'b' },
          startTime: T,
          containers: [],
          cpu: { time: T },
          memory: { time: T },
        },
      ],
    });
    expect(text).toContain(`node_cpu_usage_seconds_total 10 ${T_MS}\n`);
    expect(text).toContain(`node_memory_working_set_bytes 1000 ${T_MS}\n`);
    expect(text).toContain(`node_swap_usage_bytes 500 ${T_MS}\n`);
    expect(text).toContain(`pod_cpu_usage_seconds_total{namespace="namespace_a",pod="pod_a"} 10 ${T_MS}\n`);
    expect(text).toContain(
      `pod_memory_working_set_bytes{namespace="namespace_a",pod="pod_a"} 1000 ${T_MS}\n`,
    );
    expect(text).toContain(`pod_swap_usage_bytes{namespace="namespace_a",pod="pod_a"} 5000 ${T_MS}\n`);
    expect(text).not.toContain('pod_b');
    expect(text).toContain(
      '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds\n',
    );
  });

  it('writes only resource_scrape_error 1 when the summary failed', () => {
    expect(renderResourceMetrics(undefined)).toBe(
      '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise\n' +
        '# TYPE resource_scrape_error gauge\nresource_scrape_error 1\n',
    );
  });
});
