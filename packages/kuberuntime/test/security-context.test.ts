import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { type ContainerConfig, SecurityProfile_ProfileType, SupplementalGroupsPolicy } from '@nodeagent/cri';
import { afterEach, describe, expect, it } from 'vitest';
import { ContainerConfigError } from '../src/errors.js';
import { generatePodSandboxConfig } from '../src/sandbox-config.js';
import {
  appArmorProfile,
  containerSecurityContext,
  effectiveSecurityContext,
  verifyRunAsNonRoot,
} from '../src/security-context.js';
import { type Harness, startHarness } from './harness.js';

function pod(
  spec: Partial<NonNullable<V1Pod['spec']>> = {},
  annotations: Record<string, string> = {},
  container: Partial<V1Container> = {},
): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1', annotations },
    spec: {
      containers: [{ name: 'app', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent', ...container }],
      ...spec,
    },
  };
}
const app = (p: V1Pod) => p.spec?.containers[0] as V1Container;

describe('verifyRunAsNonRoot (upstream security_context_others.go)', () => {
  const where = '(pod: "web_shop(u-1)", container: app)';
  it.each([
    [
      'runAsUser 0 on the container',
      {},
      { runAsNonRoot: true, runAsUser: 0 },
      { uid: 1000n },
      `container's runAsUser breaks non-root policy ${where}`,
    ],
    [
      'runAsUser 0 from the pod',
      { runAsNonRoot: true, runAsUser: 0 },
      {},
      { uid: 1000n },
      `container's runAsUser breaks non-root policy ${where}`,
    ],
    [
      'image root (uid 0)',
      { runAsNonRoot: true },
      {},
      { uid: 0n },
      `container has runAsNonRoot and image will run as root ${where}`,
    ],
    [
      'image user not numeric',
      { runAsNonRoot: true },
      {},
      { username: 'nobody' },
      `container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root ${where}`,
    ],
    [
      'image uid beyond int32',
      {},
      { runAsNonRoot: true },
      { uid: 2147483648n },
      `container has runAsNonRoot and image has an invalid user id (2147483648). (Must be 1-(2147483647)): must be between 0 and 2147483647, inclusive ${where}`,
    ],
  ] as const)('refuses: %s', (_, podSc, sc, imageUser, message) => {
    const p = pod({ securityContext: podSc }, {}, { securityContext: sc });
    expect(() => verifyRunAsNonRoot(p, app(p), imageUser)).toThrow(new ContainerConfigError(message));
  });

  it.each([
    ['runAsNonRoot unset', {}, {}, { uid: 0n }],
    [
      'runAsNonRoot false on the container beats the pod',
      { runAsNonRoot: true },
      { runAsNonRoot: false },
      { uid: 0n },
    ],
    ['runAsUser non-zero, image root', { runAsNonRoot: true }, { runAsUser: 1000 }, { uid: 0n }],
    ['image uid 1000', { runAsNonRoot: true }, {}, { uid: 1000n }],
    ['image names neither (upstream lets it pass)', { runAsNonRoot: true }, {}, {}],
  ] as const)('allows: %s', (_, podSc, sc, imageUser) => {
    const p = pod({ securityContext: podSc }, {}, { securityContext: sc });
    expect(() => verifyRunAsNonRoot(p, app(p), imageUser)).not.toThrow();
  });
});

describe('containerSecurityContext (upstream determineEffectiveSecurityContext)', () => {
  it('SELinux options: the container replaces the pod as a whole; windows options are not read', () => {
    const p = pod(
      {
        securityContext: {
          seLinuxOptions: { user: 'system_u', role: 'system_r', type: 'pod_t', level: 's0:c1' },
          windowsOptions: { runAsUserName: 'ContainerAdministrator' },
        },
      },
      {},
      { securityContext: { seLinuxOptions: { type: 'container_t' } } },
    );
    expect(containerSecurityContext(p, app(p)).selinuxOptions).toEqual({
      user: '',
      role: '',
      type: 'container_t',
      level: '',
    });
    const podOnly = pod({ securityContext: { seLinuxOptions: { level: 's0:c1,c2' } } });
    expect(containerSecurityContext(podOnly, app(podOnly)).selinuxOptions).toEqual({
      user: '',
      role: '',
      type: '',
      level: 's0:c1,c2',
    });
    expect(effectiveSecurityContext(podOnly, app(podOnly))).not.toHaveProperty('windowsOptions');
    expect(generatePodSandboxConfig(podOnly, 0).linux?.securityContext?.selinuxOptions).toEqual({
      user: '',
      role: '',
      type: '',
      level: 's0:c1,c2',
    });
  });

  it("runs as the image's uid or user name when no runAsUser is set; runAsUser wins", () => {
    const p = pod();
    expect(containerSecurityContext(p, app(p), { imageUser: { uid: 1000n } })).toMatchObject({
      runAsUser: { value: 1000n },
      runAsUsername: '',
    });
    expect(containerSecurityContext(p, app(p), { imageUser: { username: 'www' } })).toMatchObject({
      runAsUser: undefined,
      runAsUsername: 'www',
    });
    const explicit = pod({ securityContext: { runAsUser: 7 } });
    expect(
      containerSecurityContext(explicit, app(explicit), { imageUser: { username: 'www' } }),
    ).toMatchObject({
      runAsUser: { value: 7n },
      runAsUsername: '',
    });
  });

  it('seccomp: container field, else pod field, else the node default; Localhost under <root>/seccomp', () => {
    const p = pod(
      { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } },
      {},
      { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } } },
    );
    expect(
      containerSecurityContext(p, app(p), { seccompProfileRoot: '/var/lib/kubelet/seccomp' }).seccomp,
    ).toEqual({
      profileType: SecurityProfile_ProfileType.Localhost,
      localhostRef: '/var/lib/kubelet/seccomp/profiles/audit.json',
    });
    const podLevel = pod({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } });
    expect(containerSecurityContext(podLevel, app(podLevel)).seccomp?.profileType).toBe(
      SecurityProfile_ProfileType.RuntimeDefault,
    );
    const none = pod();
    expect(containerSecurityContext(none, app(none)).seccomp?.profileType).toBe(
      SecurityProfile_ProfileType.Unconfined,
    );
    expect(containerSecurityContext(none, app(none), { seccompDefault: true }).seccomp?.profileType).toBe(
      SecurityProfile_ProfileType.RuntimeDefault,
    );
    const bad = pod({}, {}, { securityContext: { seccompProfile: { type: 'Localhost' } } });
    expect(() => containerSecurityContext(bad, app(bad))).toThrow(
      'localhostProfile must be set if seccompProfile type is Localhost.',
    );
    // The sandbox itself always runs RuntimeDefault (upstream issue #84623).
    expect(generatePodSandboxConfig(p, 0).linux?.securityContext?.seccomp?.profileType).toBe(
      SecurityProfile_ProfileType.RuntimeDefault,
    );
  });

  it('AppArmor: container field, then the deprecated annotation, then the pod field', () => {
    const annotation = 'container.apparmor.security.beta.kubernetes.io/app';
    const both = pod(
      { securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } },
      { [annotation]: 'localhost/from-annotation' },
      { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'from-field' } } },
    );
    expect(appArmorProfile(both, app(both))).toEqual({
      apparmor: { profileType: SecurityProfile_ProfileType.Localhost, localhostRef: 'from-field' },
      apparmorProfile: 'localhost/from-field',
    });
    const annotated = pod(
      { securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } },
      { [annotation]: 'unconfined' },
    );
    expect(appArmorProfile(annotated, app(annotated))).toEqual({
      apparmor: { profileType: SecurityProfile_ProfileType.Unconfined, localhostRef: '' },
      apparmorProfile: 'unconfined',
    });
    const podOnly = pod(
      { securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } },
      { [annotation]: 'bogus' },
    );
    expect(containerSecurityContext(podOnly, app(podOnly))).toMatchObject({
      apparmor: { profileType: SecurityProfile_ProfileType.RuntimeDefault, localhostRef: '' },
      apparmorProfile: 'runtime/default',
    });
    const none = pod();
    expect(containerSecurityContext(none, app(none))).toMatchObject({
      apparmor: undefined,
      apparmorProfile: '',
    });
    const nameless = pod({}, {}, { securityContext: { appArmorProfile: { type: 'Localhost' } } });
    expect(() => appArmorProfile(nameless, app(nameless))).toThrow('missing localhost apparmor profile name');
  });

  it('supplementalGroupsPolicy: Merge (default) / Strict to container and sandbox; anything else is refused', () => {
    const strict = pod({
      securityContext: { supplementalGroups: [5, 6], fsGroup: 4, supplementalGroupsPolicy: 'Strict' },
    });
    expect(containerSecurityContext(strict, app(strict))).toMatchObject({
      supplementalGroups: [4n, 5n, 6n],
      supplementalGroupsPolicy: SupplementalGroupsPolicy.Strict,
    });
    expect(generatePodSandboxConfig(strict, 0).linux?.securityContext?.supplementalGroupsPolicy).toBe(
      SupplementalGroupsPolicy.Strict,
    );
    const none = pod();
    expect(containerSecurityContext(none, app(none)).supplementalGroupsPolicy).toBe(
      SupplementalGroupsPolicy.Merge,
    );
    const bad = pod({ securityContext: { supplementalGroupsPolicy: 'Loose' } });
    expect(() => containerSecurityContext(bad, app(bad))).toThrow(
      'unsupported supplementalGroupsPolicy: Loose',
    );
  });
});

describe('runAsNonRoot on the fake runtime: the image user comes from ImageStatus', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function syncOnce(p: V1Pod) {
    if (h === undefined) throw new Error('no harness');
    const result = await h.manager.syncPod(p, await h.manager.getPodStatus(p));
    const api = h.manager.computePodStatus(p, await h.manager.getPodStatus(p));
    return { result, api };
  }

  it.each([
    ['', 'container has runAsNonRoot and image will run as root (pod: "web_shop(u-1)", container: app)'],
    ['0:0', 'container has runAsNonRoot and image will run as root (pod: "web_shop(u-1)", container: app)'],
    [
      'nginx',
      'container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root (pod: "web_shop(u-1)", container: app)',
    ],
  ])('image user %j: CreateContainerConfigError, no container created', async (user, message) => {
    h = await startHarness({ images: [{ ref: 'busybox:1.36', user }] });
    const p = pod({ securityContext: { runAsNonRoot: true } });
    const { result, api } = await syncOnce(p);
    const step = result.results.find((r) => r.action === 'StartContainer');
    expect(step?.error).toMatchObject({ reason: 'CreateContainerConfigError', message });
    expect(api.containerStatuses?.[0]?.state?.waiting).toEqual({
      reason: 'CreateContainerConfigError',
      message,
    });
    expect(h.fake.calls('CreateContainer')).toHaveLength(0);
  });

  it('image user 1000: created and run as uid 1000', async () => {
    h = await startHarness({ images: [{ ref: 'busybox:1.36', user: '1000:1000' }] });
    const p = pod({ securityContext: { runAsNonRoot: true } });
    const { result } = await syncOnce(p);
    expect(result.error()).toBeUndefined();
    const request = h.fake.calls('CreateContainer')[0]?.request as { config: ContainerConfig } | undefined;
    expect(request?.config.linux?.securityContext?.runAsUser).toEqual({ value: 1000n });
  });
});
