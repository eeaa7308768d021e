// pods/log, pods/exec, pods/attach, pods/portforward as kube-apiserver serves them before
// reaching the kubelet: PodLogOptions decoding and validation (400 / 422 PodLogOptions),
// the container check (`LogLocation`), an unscheduled pod's empty log, an exec without an
// upgrade (400), a node without a usable address, and upgrades of anything else (404 Status).
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MiniApiServer } from '../src/index.js';
import { pod, start } from './helpers.js';

describe('pod subresources forwarded to the kubelet', () => {
  let server: MiniApiServer;
  beforeEach(async () => {
    server = await start({ kubeletClient: {} });
    server.store.create('pods', pod('web', { nodeName: 'n1' }));
    server.store.create('pods', pod('pending'));
    server.store.create('nodes', { metadata: { name: 'n1' }, status: { addresses: [] } });
  });
  afterEach(async () => {
    await server.stop();
  });
  const get = async (path: string) => {
    const res = await fetch(`${server.url}/api/v1/namespaces/default/pods/${path}`);
    return { code: res.status, body: await res.text() };
  };

  it('validates PodLogOptions as kube-apiserver', async () => {
    const bad = await get('web/log?tailLines=-1');
    expect(bad.code).toBe(422);
    expect(JSON.parse(bad.body)).toMatchObject({
      reason: 'Invalid',
      message:
        'PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
      details: { name: 'web', kind: 'PodLogOptions' },
    });
    expect((await get('web/log?limitBytes=0')).code).toBe(422);
    expect((await get('web/log?sinceSeconds=1&sinceTime=2024-01-01T00:00:00Z')).code).toBe(422);
    const garbage = await get('web/log?sinceTime=garbage');
    expect(garbage.code).toBe(400);
    expect(JSON.parse(garbage.body).message).toContain('parsing time "garbage"');
    expect(JSON.parse((await get('web/log?follow=maybe')).body).message).toContain('strconv.ParseBool');
  });

  it('checks the pod and the container', async () => {
    expect(JSON.parse((await get('nope/log')).body)).toMatchObject({
      code: 404,
      message: 'pods "nope" not found',
    });
    expect(JSON.parse((await get('web/log?container=other')).body)).toMatchObject({
      code: 400,
      message: 'container other is not valid for pod web',
    });
  });

  it('answers an empty log for an unscheduled pod, 500 for a node without a usable address', async () => {
    expect(await get('pending/log')).toEqual({ code: 200, body: '' });
    const noAddress = await get('web/log');
    expect(noAddress.code).toBe(500);
    expect(JSON.parse(noAddress.body).message).toContain('no preferred addresses found');
  });

  it('refuses exec without an upgrade', async () => {
    const res = await fetch(`${server.url}/api/v1/namespaces/default/pods/web/exec?command=ls`, {
      method: 'POST',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe('Upgrade request required');
  });

  it('refuses an upgrade of anything but a streaming pod subresource with a 404 Status', async () => {
    const u = new URL(server.url);
    const head = await new Promise<string>((resolve, reject) => {
      const s = connect(Number(u.port), u.hostname, () =>
        s.write(
          'GET /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
        ),
      );
      let text = '';
      s.on('data', (c: Buffer) => {
        text += c.toString();
      });
      s.on('close', () => resolve(text));
      s.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 404 Not Found/);
    expect(JSON.parse(head.slice(head.indexOf('\r\n\r\n') + 4))).toMatchObject({ kind: 'Status', code: 404 });
  });
});
