import { describe, expect, it } from 'vitest';
import { formatEndpoint, InvalidEndpointError, parseEndpoint } from '../src/endpoint.js';

describe('parseEndpoint', () => {
  it('accepts unix sockets with absolute paths', () => {
    expect(parseEndpoint('unix:///run/containerd/containerd.sock')).toEqual({
      kind: 'unix',
      path: '/run/containerd/containerd.sock',
    });
  });

  it('accepts tcp host:port, IPv4, names and bracketed IPv6', () => {
    expect(parseEndpoint('tcp://10.0.0.5:10010')).toEqual({ kind: 'tcp', host: '10.0.0.5', port: 10010 });
    expect(parseEndpoint('tcp://runtime.local:1')).toEqual({ kind: 'tcp', host: 'runtime.local', port: 1 });
    expect(parseEndpoint('tcp://[::1]:65535')).toEqual({ kind: 'tcp', host: '::1', port: 65535 });
  });

  it.each([
    ['', 'no scheme'],
    ['/run/containerd/containerd.sock', 'no scheme'],
    ['npipe:////./pipe/containerd', 'unsupported scheme "npipe"'],
    ['http://localhost:80', 'unsupported scheme "http"'],
    ['unix://relative.sock', 'must be absolute'],
    ['unix://', 'must be absolute'],
    [`unix:///${'a'.repeat(120)}`, 'longer than 107 bytes'],
    ['tcp://localhost', 'expected host:port'],
    ['tcp://:8080', 'expected host:port'],
    ['tcp://host:0', 'out of range'],
    ['tcp://host:70000', 'out of range'],
    ['tcp://::1:80', 'expected host:port'],
  ])('rejects %j (%s)', (input, reason) => {
    const error = (() => {
      try {
        parseEndpoint(input);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidEndpointError);
    expect((error as InvalidEndpointError).endpoint).toBe(input);
    expect((error as Error).message).toContain(reason);
  });

  it('formats back to the same string', () => {
    for (const s of ['unix:///a/b.sock', 'tcp://h:1', 'tcp://[fe80::1]:22']) {
      expect(formatEndpoint(parseEndpoint(s))).toBe(s);
    }
  });
});
