// Shared fixtures: a fake data source, pods, temp roots and a VolumeHost over a FakeMounter.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ConfigMap, V1Pod, V1Secret, V1Volume } from '@kubernetes/client-node';
import { FakeClock, RecordingLogger } from '@nodeagent/core/testing';
import type { TokenRequestSpec, TokenRequestStatus, VolumeDataSource } from '../src/index.js';
import { FakeMounter, TokenManager, type VolumeHost } from '../src/index.js';

/** A data source over maps; counts calls; fails on demand. */
export class FakeDataSource implements VolumeDataSource {
  readonly configMaps = new Map<string, V1ConfigMap>();
  readonly secrets = new Map<string, V1Secret>();
  readonly tokenRequests: { namespace: string; name: string; spec: TokenRequestSpec }[] = [];
  calls = 0;
  failWith: Error | undefined;
  tokenFailWith: Error | undefined;
  constructor(private readonly clock: { now(): number } = { now: () => Date.now() }) {}

  async getConfigMap(ns: string, name: string): Promise<V1ConfigMap | undefined> {
    this.calls++;
    if (this.failWith) throw this.failWith;
    return this.configMaps.get(`${ns}/${name}`);
  }
  async getSecret(ns: string, name: string): Promise<V1Secret | undefined> {
    this.calls++;
    if (this.failWith) throw this.failWith;
    return this.secrets.get(`${ns}/${name}`);
  }
  async createToken(namespace: string, name: string, spec: TokenRequestSpec): Promise<TokenRequestStatus> {
    if (this.tokenFailWith) throw this.tokenFailWith;
    this.tokenRequests.push({ namespace, name, spec });
    const n = this.tokenRequests.length;
    return {
      token: `token-${n}-${spec.audiences.join(',')}`,
      expirationTimestamp: new Date(this.clock.now() + spec.expirationSeconds * 1000).toISOString(),
    };
  }
  putConfigMap(
    ns: string,
    name: string,
    data: Record<string, string>,
    binaryData?: Record<string, string>,
  ): void {
    this.configMaps.set(`${ns}/${name}`, {
      metadata: { namespace: ns, name },
      data,
      ...(binaryData ? { binaryData } : {}),
    });
  }
  putSecret(ns: string, name: string, data: Record<string, string>): void {
    const b64: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) b64[k] = Buffer.from(v).toString('base64');
    this.secrets.set(`${ns}/${name}`, { metadata: { namespace: ns, name }, data: b64 });
  }
}

/** A pod in ns `default` mounting every volume into container `app`. */
export function makePod(volumes: V1Volume[], over: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1', labels: { app: 'web' } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'busybox',
          volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: `/mnt/${v.name}` })),
        },
      ],
      volumes,
      ...over,
    },
  };
}

/** A temp dir removed by the returned cleanup. */
export async function tempRoot(
  prefix = 'nodeagent-volumes-',
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A VolumeHost on a FakeMounter with tmpfs mode (mounts recorded, files on disk). */
export function fakeHost(
  podsDir: string,
  source = new FakeDataSource(),
  clock = new FakeClock(),
): VolumeHost & {
  mounter: FakeMounter;
  source: FakeDataSource;
} {
  return {
    podsDir,
    mounter: new FakeMounter(),
    dataSource: source,
    source,
    tokens: new TokenManager({ source, clock, random: () => 0 }),
    nodeAllocatable: () => ({ cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' }),
    memoryMedium: 'tmpfs',
    clock,
    logger: new RecordingLogger(),
  };
}
