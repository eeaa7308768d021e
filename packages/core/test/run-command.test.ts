import { describe, expect, it } from 'vitest';
import { CommandError, commandArgv, runCommand } from '../src/index.js';

describe('runCommand', () => {
  it('feeds stdin and collects stdout', async () => {
    const r = await runCommand(['cat'], { input: 'hello\nworld\n' });
    expect(r).toEqual({ code: 0, signal: undefined, stdout: 'hello\nworld\n', stderr: '', timedOut: false });
  });

  it('gives an empty stdin when there is no input', async () => {
    const r = await runCommand(['cat']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('reports stderr and a non-zero exit code without rejecting', async () => {
    const r = await runCommand(['sh', '-c', 'echo out; echo oops >&2; exit 3']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('oops\n');
  });

  it('runs without a shell: arguments are not expanded', async () => {
    const r = await runCommand(['echo', '$HOME', '*']);
    expect(r.stdout).toBe('$HOME *\n');
  });

  it('passes the environment', async () => {
    const r = await runCommand(['sh', '-c', 'printf %s "$RUN_COMMAND_TEST"'], {
      env: { PATH: process.env.PATH, RUN_COMMAND_TEST: 'value-1' },
    });
    expect(r.stdout).toBe('value-1');
  });

  it('kills the child after timeoutMs', async () => {
    const r = await runCommand(['sleep', '30'], { timeoutMs: 50 });
    expect(r).toMatchObject({ code: undefined, signal: 'SIGKILL', timedOut: true });
  });

  it('does not report a timeout when the command ends in time', async () => {
    const r = await runCommand(['true'], { timeoutMs: 10_000 });
    expect(r).toMatchObject({ code: 0, timedOut: false });
  });

  it('survives a child that exits without reading its stdin', async () => {
    const r = await runCommand(['sh', '-c', 'exit 2'], { input: 'x'.repeat(1 << 20) });
    expect(r.code).toBe(2);
  });

  it('rejects with a CommandError when the binary does not exist', async () => {
    const err = await runCommand(['/nonexistent/run-command-test']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect((err as CommandError).argv).toEqual(['/nonexistent/run-command-test']);
    expect((err as CommandError).exitCode).toBeUndefined();
    expect((err as CommandError).stderr).toMatch(/ENOENT/);
    expect((err as CommandError).cause).toBeInstanceOf(Error);
  });

  it('rejects with a CommandError when aborted, and kills the child', async () => {
    const ac = new AbortController();
    const p = runCommand(['sleep', '30'], { signal: ac.signal });
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect((err as CommandError).name).toBe('CommandError');
  });

  it('rejects an empty argv', async () => {
    await expect(runCommand([])).rejects.toThrow(TypeError);
  });
});

describe('commandArgv', () => {
  it('returns the argv unchanged without a namespace', () => {
    expect(commandArgv(['nft', '-f', '-'])).toEqual(['nft', '-f', '-']);
  });

  it('prefixes nsenter for a named network namespace', () => {
    expect(commandArgv(['nft', '-f', '-'], { netns: 'test-ns_1.a' })).toEqual([
      'nsenter',
      '--net=/run/netns/test-ns_1.a',
      '--',
      'nft',
      '-f',
      '-',
    ]);
  });

  it('refuses a namespace name that could escape /run/netns', () => {
    expect(() => commandArgv(['true'], { netns: '../etc' })).toThrow(TypeError);
    expect(() => commandArgv(['true'], { netns: '' })).toThrow(TypeError);
  });
});

describe('CommandError', () => {
  it('says what failed, with the exit code and trimmed stderr', () => {
    const e = new CommandError(['tool', '-x'], 2, '  bad flag\n');
    expect(e.message).toBe('tool -x failed (exit 2): bad flag');
    expect(new CommandError(['tool'], undefined, '').message).toBe('tool failed (exit signal): ');
  });

  it('can be subclassed with its own name', () => {
    class ToolError extends CommandError {
      override readonly name = 'ToolError';
    }
    const e = new ToolError(['tool'], 1, 'x');
    expect(e).toBeInstanceOf(CommandError);
    expect(e.name).toBe('ToolError');
  });
});
