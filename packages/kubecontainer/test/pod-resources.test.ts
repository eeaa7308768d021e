// Pod totals as upstream's component-helpers PodRequests / PodLimits compute them.
import { describe, expect, it } from 'vitest';
import { podLimitsMilli, podRequestsMilli, type ResourcePod } from '../src/index.js';

const c = (
  requests: Record<string, string>,
  limits: Record<string, string> = {},
  restartPolicy?: string,
) => ({
  resources: { requests, limits },
  ...(restartPolicy === undefined ? {} : { restartPolicy }),
});

describe('pod requests and limits', () => {
  it('app containers add up; a larger init container wins (max vs sum)', () => {
    const pod: ResourcePod = {
      spec: {
        containers: [c({ cpu: '100m' }), c({ cpu: '200m', memory: '1Mi' })],
        initContainers: [c({ cpu: '500m' })],
      },
    };
    const r = podRequestsMilli(pod);
    expect(r.get('cpu')).toBe(500n);
    expect(r.get('memory')).toBe(1024n * 1024n * 1000n);
  });

  it('sidecars add to the app containers and run beside later init containers (KEP-753)', () => {
    const pod: ResourcePod = {
      spec: {
        containers: [c({ cpu: '200m' })],
        initContainers: [c({ cpu: '100m' }, {}, 'Always'), c({ cpu: '250m' })],
      },
    };
    expect(podRequestsMilli(pod).get('cpu')).toBe(350n);
  });

  it('a limit without a request counts as the request (API defaulting)', () => {
    expect(podRequestsMilli({ spec: { containers: [c({}, { cpu: '1' })] } }).get('cpu')).toBe(1000n);
  });

  it('overhead goes into every request but only into non-zero limits', () => {
    const pod: ResourcePod = {
      spec: {
        containers: [c({ cpu: '100m', memory: '10Mi' }, { cpu: '100m' })],
        overhead: { cpu: '10m', memory: '1Mi' },
      },
    };
    expect(podRequestsMilli(pod).get('cpu')).toBe(110n);
    expect(podRequestsMilli(pod).get('memory')).toBe(11n * 1024n * 1024n * 1000n);
    const l = podLimitsMilli(pod);
    expect(l.get('cpu')).toBe(110n);
    expect(l.has('memory')).toBe(false);
  });

  it('onStep sees each container and each init step', () => {
    const steps: (bigint | undefined)[] = [];
    podLimitsMilli(
      {
        spec: {
          containers: [c({}, { cpu: '1' })],
          initContainers: [c({}, {}, 'Always'), c({}, { cpu: '2' })],
        },
      },
      (s) => steps.push(s.get('cpu')),
    );
    expect(steps).toEqual([1000n, undefined, 2000n]);
  });
});
