// Benchmark child: @nodeagent/informer (built dist) syncing from the server in the kubeconfig.
// Protocol: prints `BENCH {json}` lines on stdout. Run by informer.bench.ts.
import { KubeConfig } from '@kubernetes/client-node';
import { RestListerWatcher, SharedInformer } from '../dist/index.js';
import { runChild } from './child-common.mjs';

await runChild(async ({ kubeconfig, onUpdate }) => {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const informer = new SharedInformer(new RestListerWatcher({ kubeConfig: kc, path: '/api/v1/pods' }), {
    name: 'bench',
  });
  informer.addEventHandler({ onUpdate: () => onUpdate() });
  await informer.start();
  return { size: () => informer.indexer.size, stop: () => informer.stop() };
});
