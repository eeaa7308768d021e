/**
 * `dataPlaneDoctor()`: the library form of `nodeagent-proxy doctor` gives the same findings
 * as the command's `--json` over the same (injected) node readings.
 */
import { describe, expect, it } from 'vitest';
import { runDoctorCli } from '../src/cli/doctor.js';
import type { DoctorRunner } from '../src/cli/doctor-read.js';
import { dataPlaneDoctor } from '../src/index.js';

/** A node without proxy tools except `cat` of the given sysctls. */
function bareNode(sysctls: Record<string, string>): DoctorRunner {
  return async (argv) => {
    if (argv[0] !== 'cat') return undefined;
    const v = sysctls[argv[1]!.replace('/proc/sys/', '').replaceAll('/', '.')];
    return v === undefined
      ? { code: 1, stdout: '', stderr: 'No such file or directory' }
      : { code: 0, stdout: `${v}\n`, stderr: '' };
  };
}

describe('dataPlaneDoctor', () => {
  it("returns the CLI's findings and modes", async () => {
    const runner = bareNode({ 'net.ipv4.ip_forward': '0', 'net.ipv4.conf.all.route_localnet': '1' });
    const lib = await dataPlaneDoctor({ runner });
    let stdout = '';
    await runDoctorCli(['--json'], {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: () => true },
      env: {},
      runner,
    });
    const cli = JSON.parse(stdout) as { modes: string[]; findings: unknown[] };
    expect(lib.modes).toEqual(cli.modes);
    expect(lib.findings).toEqual(cli.findings);
    expect(lib.findings.find((f) => f.id === 'ip-forward')?.severity).toBe('error');
  });

  it('rejects a network namespace that does not exist', async () => {
    await expect(dataPlaneDoctor({ netns: 'no-such-netns-for-doctor' })).rejects.toThrow(/does not exist/);
  });
});
