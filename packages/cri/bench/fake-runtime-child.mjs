// Benchmark child: hosts a FakeRuntime in its own process, so the client side of a benchmark
// is timed without the server's encoding on the same thread. Plain JS: argv[2] is the path of
// the bundled `@nodeagent/cri/testing` module (bench/fake-runtime-process.ts builds it).
// Driven over the IPC channel with `{ id, op, ...args }` requests, answered `{ id, result }` or
// `{ id, error }`; exits when the parent goes away.
const { FakeRuntime } = await import(process.argv[2]);

/** @type {InstanceType<typeof FakeRuntime> | undefined} */
let fake;

const ops = {
  /** @param {{ options?: object }} args */
  async start({ options = {} }) {
    fake = new FakeRuntime(options);
    await fake.start();
    return { endpoint: fake.endpoint };
  },
  /**
   * Seeds pods directly (no RPC): `pods` is `[{ sandbox: PodSandboxConfig, containers:
   * ContainerConfig[] }]` in partial-message JSON form.
   * @param {{ pods: Array<{ sandbox: object, containers: object[] }> }} args
   */
  async seed({ pods }) {
    const sandboxIds = [];
    const containerIds = [];
    for (const pod of pods) {
      const sandboxId = need().addSandbox(pod.sandbox);
      sandboxIds.push(sandboxId);
      for (const config of pod.containers) containerIds.push(await need().addContainer(sandboxId, config));
    }
    return { sandboxIds, containerIds };
  },
  /** @param {{ ids: string[], exitCode?: number }} args */
  kill({ ids, exitCode = 1 }) {
    for (const id of ids) need().killContainer(id, { exitCode });
    return { killed: ids.length };
  },
  /** CPU time this process has used so far, µs (user + system). */
  cpu() {
    const { user, system } = process.cpuUsage();
    return { cpuUs: user + system };
  },
  async stop() {
    await fake?.stop();
    fake = undefined;
    return {};
  },
};

function need() {
  if (fake === undefined) throw new Error('fake runtime not started');
  return fake;
}

process.on('message', async (message) => {
  const { id, op, ...args } = message;
  try {
    const handler = ops[op];
    if (handler === undefined) throw new Error(`unknown op ${op}`);
    process.send({ id, result: await handler(args) });
  } catch (err) {
    process.send({ id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
process.on('disconnect', async () => {
  await fake?.stop();
  process.exit(0);
});
process.send({ ready: true });
