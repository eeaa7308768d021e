// Shared measurement loop of the benchmark children (run with --expose-gc).
// argv[2] is JSON: { kubeconfig, expected, updates }.

const emit = (obj) => process.stdout.write(`BENCH ${JSON.stringify(obj)}\n`);

/** @param {(ctx: { kubeconfig: string, onUpdate: () => void }) => Promise<{ size(): number, stop(): unknown }>} start */
export async function runChild(start) {
  const { kubeconfig, expected, updates } = JSON.parse(process.argv[2]);
  globalThis.gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let seen = 0;
  let firstCpu;
  let firstAt = 0;
  let finish;
  const finished = new Promise((resolve) => {
    finish = resolve;
  });
  const onUpdate = () => {
    if (seen === 0) {
      firstCpu = process.cpuUsage();
      firstAt = performance.now();
    }
    seen++;
    if (seen === updates) finish();
  };
  const t0 = performance.now();
  const informer = await start({ kubeconfig, onUpdate });
  const syncMs = performance.now() - t0;
  const size = informer.size();
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  globalThis.gc();
  globalThis.gc();
  const heapPerObject = (process.memoryUsage().heapUsed - heapBefore) / Math.max(1, size);
  emit({ phase: 'synced', syncMs, size, expected, peakRssMb, heapPerObject });
  if (updates > 0) {
    await finished;
    const cpu = process.cpuUsage(firstCpu);
    const seconds = (performance.now() - firstAt) / 1000;
    emit({
      phase: 'updates',
      events: seen,
      eventsPerSecond: seen / seconds,
      cpuUsPerEvent: (cpu.user + cpu.system) / seen,
    });
  }
  await informer.stop();
  process.exit(0);
}
