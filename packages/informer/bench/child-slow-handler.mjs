// Benchmark child for slow-handler.bench.ts: an informer on pods whose update handler burns
// 5 ms of CPU per event and returns nothing. argv[2] is JSON: { client, kubeconfig, updates }.
// Prints `BENCH {json}` lines: 'synced', then a 'sample' every 20 ms (wall time, the stored
// pod's generation, handler calls so far), then 'done' once the handler saw every update.
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import { RestListerWatcher, SharedInformer } from '../dist/index.js';

const { client, kubeconfig, updates } = JSON.parse(process.argv[2]);
const emit = (obj) => process.stdout.write(`BENCH ${JSON.stringify(obj)}\n`);
const busy = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a slow synchronous handler
  }
};
const kc = new KubeConfig();
kc.loadFromString(kubeconfig);
let handled = 0;
let stored;
let stop;
const onUpdate = () => {
  busy(5);
  handled++;
};
if (client === 'ours') {
  const informer = new SharedInformer(new RestListerWatcher({ kubeConfig: kc, path: '/api/v1/pods' }), {
    name: 'bench',
  });
  informer.addEventHandler({ onUpdate });
  await informer.start();
  stored = () => informer.lister.get('a', 'default')?.metadata?.labels?.gen;
  stop = () => informer.stop();
} else {
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  informer.on('update', onUpdate);
  await informer.start();
  stored = () => informer.list().find((p) => p.metadata?.name === 'a')?.metadata?.labels?.gen;
  stop = () => informer.stop();
}
emit({ phase: 'synced' });
const timer = setInterval(() => {
  emit({ phase: 'sample', t: Date.now(), stored: Number(stored() ?? -1), handled });
  if (handled >= updates) {
    clearInterval(timer);
    emit({ phase: 'done', t: Date.now() });
    Promise.resolve(stop()).finally(() => process.exit(0));
  }
}, 20);
