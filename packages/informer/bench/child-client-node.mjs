// Benchmark child: @kubernetes/client-node 1.4 makeInformer syncing from the server in the kubeconfig.
// Protocol: prints `BENCH {json}` lines on stdout. Run by informer.bench.ts.
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import { runChild } from './child-common.mjs';

await runChild(async ({ kubeconfig, onUpdate }) => {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  informer.on('update', () => onUpdate());
  informer.on('error', (err) => process.stderr.write(`client-node informer error: ${err}\n`));
  await informer.start();
  return { size: () => informer.list().length, stop: () => informer.stop() };
});
