/**
 * The REST ListerWatcher over HTTPS against the mini-apiserver: CA verification from the
 * kubeconfig, client-certificate authentication, and a wrong CA (a TLS error event, retries
 * with backoff, no crash, start() rejects only when stopped).
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '@nodeagent/core';
import { FakeClock } from '@nodeagent/core/testing';
import { afterEach, describe, expect, test } from 'vitest';
import {
  createSelfSignedTls,
  type MiniApiServer,
  startMiniApiServer,
} from '../../mini-apiserver/src/index.js';
import {
  InformerStoppedError,
  RestListerWatcher,
  SharedInformer,
  TlsVerificationError,
} from '../src/index.js';
import { testPod as pod, until } from './helpers.js';

let server: MiniApiServer | undefined;
let informer: SharedInformer | undefined;
let lw: RestListerWatcher | undefined;
afterEach(async () => {
  await informer?.stop();
  lw?.close();
  await server?.stop();
  informer = undefined;
  server = undefined;
});

function informerFor(kubeconfig: string, clock?: Clock): { informer: SharedInformer; errors: Error[] } {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  lw = new RestListerWatcher({ kubeConfig: kc, path: '/api/v1/pods' });
  informer = new SharedInformer(lw, {
    backoff: { initialMs: 50, capMs: 400, resetAfterMs: 5000 },
    ...(clock ? { clock } : {}),
  });
  const errors: Error[] = [];
  informer.on('watchError', (e) => errors.push(e));
  return { informer, errors };
}

describe('informer over HTTPS', () => {
  test('verifies the server with the CA from the kubeconfig (token auth)', async () => {
    server = await startMiniApiServer({ tls: 'self-signed', token: 'tok' });
    expect(server.kubeconfig).not.toContain('insecure-skip-tls-verify');
    server.store.create('pods', pod('a'));
    const { informer, errors } = informerFor(server.kubeconfig);
    await informer.start(AbortSignal.timeout(15_000));
    expect(informer.lister.list().map((p) => p.metadata?.name)).toEqual(['a']);
    server.store.create('pods', pod('b'));
    await until('the watched pod', () => informer.lister.get('b', 'default') !== undefined);
    expect(errors).toEqual([]);
    expect(server.requests.every((r) => r.user === 'mini-apiserver-user')).toBe(true);
  });

  test('authenticates with the client certificate from the kubeconfig (CN = user)', async () => {
    server = await startMiniApiServer({
      tls: 'self-signed',
      requestCert: true,
      clientCertificateUser: 'node-agent',
    });
    server.store.create('pods', pod('a'));
    const { informer } = informerFor(server.kubeconfig);
    await informer.start(AbortSignal.timeout(15_000));
    await until('the watch', () => server?.openWatches === 1);
    expect(server.requests.map((r) => r.user)).toEqual(['node-agent', 'node-agent']);
    expect(server.requests.map((r) => r.watch)).toEqual([false, true]);
  });

  test('a wrong CA: TLS error events, retries with backoff, no crash; start() rejects once stopped', async () => {
    const [s, other] = await Promise.all([
      startMiniApiServer({ tls: 'self-signed', token: 'tok' }),
      createSelfSignedTls(),
    ]);
    server = s;
    const doc = JSON.parse(s.kubeconfig);
    doc.clusters[0].cluster['certificate-authority-data'] = Buffer.from(other.ca).toString('base64');
    const clock = new FakeClock();
    const { informer, errors } = informerFor(JSON.stringify(doc), clock);
    const ac = new AbortController();
    const started = informer.start(ac.signal);
    started.catch(() => {});
    let seen = 0;
    while (seen < 3) {
      await until('a TLS error', () => errors.length > seen);
      seen = errors.length;
      // The next attempt waits for the backoff, which only the (fake) clock can end.
      await new Promise((r) => setTimeout(r, 100));
      expect(errors).toHaveLength(seen);
      await clock.advance(400);
    }
    for (const e of errors) {
      expect(e).toBeInstanceOf(TlsVerificationError);
      expect((e as TlsVerificationError).server).toBe(s.url);
      expect(e.message).toMatch(
        /^TLS verification of https:\/\/127\.0\.0\.1:\d+ failed: .*certificate-authority/,
      );
    }
    expect((errors[0] as TlsVerificationError).code).toMatch(
      /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN/,
    );
    expect(informer.hasSynced()).toBe(false);
    // The handshake failed every time: the server never saw a request.
    expect(s.requests).toEqual([]);
    void informer.stop();
    await expect(started).rejects.toBeInstanceOf(InformerStoppedError);
  });
});
