// The command line in process: --help, bad flags (exit 2), and a --demo run that shows the
// demo pods progressing (Running with an endpoint, CrashLoopBackOff, Succeeded), then stops
// cleanly when its signal aborts, removing the temp kubeconfig.
import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { waitFor } from './helpers.js';

function sink() {
  const chunks: string[] = [];
  return { write: (t: string) => chunks.push(t), text: () => chunks.join('') };
}

it('prints the usage for --help and exits 2 on a bad flag', async () => {
  const out = sink();
  expect(await runCli(['--help'], { stdout: out, stderr: sink(), handleSignals: false })).toBe(0);
  expect(out.text()).toMatch(/--container-runtime-endpoint unix:\/\/\/P/);
  const err = sink();
  expect(await runCli(['--exit-after=x'], { stdout: sink(), stderr: err, handleSignals: false })).toBe(2);
  expect(err.text()).toMatch(/^error: --exit-after: expected a number/);
});

it('prints the version from its package.json for --version', async () => {
  const out = sink();
  expect(await runCli(['--version'], { stdout: out, stderr: sink(), handleSignals: false })).toBe(0);
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  expect(out.text()).toBe(`${version}\n`);
});

it('runs the demo and stops cleanly', async () => {
  const out = sink();
  const err = sink();
  const stop = new AbortController();
  const code = runCli(
    ['--demo', '--node-name=cli-node', '--max-container-restart-period=1', '--log-level=warn'],
    {
      stdout: out,
      stderr: err,
      signal: stop.signal,
      handleSignals: false,
      agentOptions: { relistPeriodMs: 200, housekeepingMs: 200 },
    },
  );
  await waitFor(
    'demo progress',
    () =>
      /pod web +Running +ready 2\/2/.test(out.text()) &&
      /service web endpoints: 127\.88\.\d+\.\d+:8080\n/.test(out.text()) &&
      /pod crasher +CrashLoopBackOff/.test(out.text()) &&
      /pod job +Succeeded/.test(out.text()) &&
      /pod probe-exec +Running +ready 1\/1/.test(out.text()) &&
      /pod probe-start +Running +ready 1\/1/.test(out.text()) &&
      /pod greedy +OutOfcpu +ready 0\/1/.test(out.text()) &&
      /pod static-web-cli-node +Running +ready 1\/1/.test(out.text()) &&
      /pod probe-net +Running +ready 1\/1/.test(out.text()) &&
      /pod probe-grpc +Running +ready 1\/1/.test(out.text()) &&
      // kube-proxy in the agent: the rendered rules follow the web Service's ready endpoint.
      /proxy rules: default\/web:http → 127\.88\.\d+\.\d+:8080\n/.test(out.text()),
    20_000,
  );
  expect(out.text()).toMatch(/kube-proxy: --proxy-mode iptables \(rules rendered, not applied\)\n/);
  expect(out.text()).toMatch(/try: curl http:\/\/127\.0\.0\.1:\d+\/proxyRules/);

  const kubeconfig = /kubeconfig: (\S+)/.exec(out.text())?.[1] ?? '';
  expect(existsSync(kubeconfig)).toBe(true);
  stop.abort();
  expect(await code).toBe(0);
  expect(out.text()).toMatch(/stopping the node agent\n$/);
  expect(existsSync(kubeconfig)).toBe(false);
  expect(err.text()).not.toMatch(/ERROR/);
  // Not ready before their probes passed.
  expect(out.text()).toMatch(/pod probe-exec +Running +ready 0\/1/);
  expect(out.text()).toMatch(/pod probe-start +Running +ready 0\/1/);
  expect(out.text()).toMatch(/pod probe-net +Running +ready 0\/1/);
  expect(out.text()).toMatch(/pod probe-grpc +Running +ready 0\/1/);
}, 30_000);
