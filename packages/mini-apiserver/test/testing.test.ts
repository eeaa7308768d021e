import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { startTestApiServer } from '../src/testing.js';

it('startTestApiServer: a server, its URL, a kubeconfig file, and stop() that removes it', async () => {
  const api = await startTestApiServer();
  expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(api.env).toEqual({ KUBECONFIG: api.kubeconfigPath });
  expect(readFileSync(api.kubeconfigPath, 'utf8')).toBe(api.kubeconfig);
  const kc = new KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  expect(kc.getCurrentCluster()?.server).toBe(api.url);
  const res = await fetch(`${api.url}/api/v1/namespaces/default/pods`);
  expect(res.status).toBe(200);
  await api.stop();
  await api.stop();
  expect(existsSync(dirname(api.kubeconfigPath))).toBe(false);
});
