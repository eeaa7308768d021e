// The API adapter sends the requests upstream's kubelet sends (GET configmaps/secrets, POST a
// TokenRequest with audiences, expirationSeconds and the pod as boundObjectRef), and the
// mountinfo parser decodes escaped mount points.
import { describe, expect, it } from 'vitest';
import { apiVolumeDataSource, parseMountInfo, type VolumeJsonApi } from '../src/index.js';

function recordingApi(answers: Record<string, unknown>) {
  const calls: { method: string; path: string; body?: unknown }[] = [];
  const api: VolumeJsonApi = {
    async get<T>(path: string) {
      calls.push({ method: 'GET', path });
      return answers[path] as T | undefined;
    },
    async create<T>(path: string, body: T) {
      calls.push({ method: 'POST', path, body });
      return answers[path] as T;
    },
  };
  return { api, calls };
}

describe('apiVolumeDataSource', () => {
  it('GETs ConfigMaps and Secrets by namespace and name; 404 is undefined', async () => {
    const { api, calls } = recordingApi({ '/api/v1/namespaces/ns/configmaps/cfg': { data: { a: '1' } } });
    const source = apiVolumeDataSource(api);
    expect(await source.getConfigMap('ns', 'cfg')).toEqual({ data: { a: '1' } });
    expect(await source.getSecret('ns', 's')).toBeUndefined();
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /api/v1/namespaces/ns/configmaps/cfg',
      'GET /api/v1/namespaces/ns/secrets/s',
    ]);
  });

  it('POSTs an authentication.k8s.io/v1 TokenRequest to serviceaccounts/<name>/token', async () => {
    const path = '/api/v1/namespaces/ns/serviceaccounts/default/token';
    const { api, calls } = recordingApi({
      [path]: { status: { token: 'jwt', expirationTimestamp: '2030-01-01T00:00:00Z' } },
    });
    const got = await apiVolumeDataSource(api).createToken('ns', 'default', {
      audiences: ['https://kubernetes.default.svc'],
      expirationSeconds: 3607,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' },
    });
    expect(got).toEqual({ token: 'jwt', expirationTimestamp: '2030-01-01T00:00:00Z' });
    expect(calls).toEqual([
      {
        method: 'POST',
        path,
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            audiences: ['https://kubernetes.default.svc'],
            expirationSeconds: 3607,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' },
          },
        },
      },
    ]);
  });

  it('a TokenRequest answer without a token is an error naming the service account', async () => {
    const { api } = recordingApi({ '/api/v1/namespaces/ns/serviceaccounts/sa/token': { status: {} } });
    await expect(
      apiVolumeDataSource(api).createToken('ns', 'sa', { audiences: [], expirationSeconds: 600 }),
    ).rejects.toThrow('TokenRequest for ns/sa returned no token');
  });
});

describe('parseMountInfo', () => {
  it('returns field 5, with \\040-style escapes decoded', () => {
    const text = [
      '36 35 98:0 / /mnt1 rw,noatime master:1 - ext3 /dev/root rw,errors=continue',
      '52 36 0:45 / /var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/my\\040secret rw,relatime - tmpfs tmpfs rw,size=1024k',
      '',
    ].join('\n');
    expect(parseMountInfo(text)).toEqual([
      '/mnt1',
      '/var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/my secret',
    ]);
  });
});
