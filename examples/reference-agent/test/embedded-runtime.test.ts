// The embedded runtime's emulation rules: a container's script played on its files (touch, rm,
// `> F` redirects, sleep; a foreground httpd blocks the rest), exec probe commands answered from
// those files, the httpd document root, and the declared TCP ports a container listens on.
import { describe, expect, it } from 'vitest';
import { declaredTcpPorts, grpcServingFile } from '../src/embedded-container-ports.js';
import { busyboxLikeExec, httpdDocroot, scriptFilesAt } from '../src/embedded-runtime.js';

describe('scriptFilesAt', () => {
  const script = 'touch /tmp/a; sleep 2; echo ok > /tmp/b; sleep 3; rm -f /tmp/a; sleep 600';
  it('plays touch / redirect / rm at the time they happen', () => {
    expect([...scriptFilesAt(script, 0)]).toEqual(['/tmp/a']);
    expect([...scriptFilesAt(script, 2_000)].sort()).toEqual(['/tmp/a', '/tmp/b']);
    expect([...scriptFilesAt(script, 5_000)]).toEqual(['/tmp/b']);
  });
  it('a foreground httpd blocks what follows; a daemonised one does not', () => {
    expect([...scriptFilesAt('touch /x; httpd -f -p 80; touch /y', 10_000)]).toEqual(['/x']);
    expect([...scriptFilesAt('touch /x; httpd -p 80; touch /y', 10_000)]).toEqual(['/x', '/y']);
  });
  it('redirects to /dev/null and fd duplications create nothing', () => {
    expect([...scriptFilesAt('date > /dev/null; ls 2>&1', 0)]).toEqual([]);
  });
});

describe('busyboxLikeExec', () => {
  const files = new Set(['/tmp/ready']);
  it('cat / test / ls succeed only for existing files', () => {
    expect(busyboxLikeExec(['cat', '/tmp/ready'], files).exitCode).toBe(0);
    expect(busyboxLikeExec(['cat', '/tmp/nope'], files)).toMatchObject({ exitCode: 1 });
    expect(busyboxLikeExec(['sh', '-c', 'test -e /tmp/ready'], files).exitCode).toBe(0);
    expect(busyboxLikeExec(['ls', '/tmp/nope'], files).exitCode).toBe(1);
    expect(busyboxLikeExec(['exit', '3'], files).exitCode).toBe(3);
  });
  it('runs an sh -c script as sh: ; && || and exit N', () => {
    expect(busyboxLikeExec(['sh', '-c', 'echo hi; exit 3'], files)).toMatchObject({
      stdout: 'hi\n',
      exitCode: 3,
    });
    expect(busyboxLikeExec(['sh', '-c', "echo 'a; b' && false || echo c; echo d"], files)).toMatchObject({
      stdout: 'a; b\nc\nd\n',
      exitCode: 0,
    });
    expect(busyboxLikeExec(['sh', '-c', 'cat /tmp/nope && echo never'], files)).toMatchObject({
      stdout: '',
      exitCode: 1,
    });
    expect(busyboxLikeExec(['sh', '-c', 'exit 0; echo after'], files)).toMatchObject({
      stdout: '',
      exitCode: 0,
    });
  });
});

describe('httpdDocroot', () => {
  it('the -h of an httpd step, else /', () => {
    expect(httpdDocroot('mkdir -p /www; httpd -f -p 8080 -h /www')).toBe('/www');
    expect(httpdDocroot('sleep 600')).toBe('/');
  });
});

describe('declaredTcpPorts', () => {
  it('TCP (or unset protocol) container ports of the kubelet annotation; bad input gives none', () => {
    const annotation = JSON.stringify([
      { containerPort: 8080, protocol: 'TCP' },
      { containerPort: 53, protocol: 'UDP' },
      { containerPort: 9090 },
      { containerPort: 0 },
      { containerPort: 70000 },
    ]);
    expect(declaredTcpPorts(annotation)).toEqual([8080, 9090]);
    expect(declaredTcpPorts('not json')).toEqual([]);
    expect(declaredTcpPorts('{"a":1}')).toEqual([]);
    expect(declaredTcpPorts(undefined)).toEqual([]);
  });
});

it('grpc serving files', () => {
  expect(grpcServingFile('')).toBe('/tmp/grpc-serving');
  expect(grpcServingFile('db')).toBe('/tmp/grpc-serving.db');
});
