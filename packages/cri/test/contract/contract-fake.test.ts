// The CRI contract against the fake runtime. Behaviours are scripted so the contract's
// commands act as real busybox shells do on containerd; the fake runs on the real clock
// here (the stop-timeout case needs 2 s of it), everything else is immediate.
import { FakeRuntime } from '../../src/testing.js';
import { CONTRACT_COMMANDS, CONTRACT_EXEC } from './contract-fixtures.js';
import { defineCriContract } from './cri-contract.js';

const IMAGE = 'registry.local/busybox:latest';
const POD_CIDR = '10.66.0.0/24';

defineCriContract(
  'FakeRuntime',
  async () => {
    const fake = new FakeRuntime({
      podCidr: POD_CIDR,
      images: [{ ref: IMAGE }],
      behaviours: [
        { match: { command: [...CONTRACT_COMMANDS.exit3] }, behaviour: { exitAfterMs: 20, exitCode: 3 } },
        { match: { command: [...CONTRACT_COMMANDS.exit0] }, behaviour: { exitAfterMs: 20, exitCode: 0 } },
        // PID 1 without a handler: SIGTERM does nothing, only SIGKILL at the timeout ends it.
        { match: { command: [...CONTRACT_COMMANDS.ignoreTerm] }, behaviour: { ignoreSigterm: true } },
        { match: { command: [...CONTRACT_COMMANDS.sleep] }, behaviour: { ignoreSigterm: true } },
        // The trap runs after the current `sleep 1`, then exits 0.
        {
          match: { command: [...CONTRACT_COMMANDS.graceful] },
          behaviour: { sigtermDelayMs: 300, sigtermExitCode: 0 },
        },
      ],
      execScripts: [
        {
          cmd: [...CONTRACT_EXEC.argv],
          stdout: CONTRACT_EXEC.stdout,
          stderr: CONTRACT_EXEC.stderr,
          exitCode: CONTRACT_EXEC.exitCode,
        },
      ],
    });
    await fake.start();
    const endpoint = fake.endpoint;
    return { endpoint, imageRef: IMAGE, podCidr: POD_CIDR, teardown: () => fake.stop() };
  },
  { containerEvents: true, stopOfUnknownSucceeds: true, podSandboxStats: true, binaryEnvValues: true },
);
