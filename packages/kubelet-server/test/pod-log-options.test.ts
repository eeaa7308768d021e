// Upstream: the kubelet decodes /containerLogs queries as v1 PodLogOptions (legacy `tail`
// mapped to tailLines) and checks them with ValidatePodLogOptions.
import { describe, expect, it } from 'vitest';
import {
  PodLogOptionsDecodeError,
  parsePodLogOptions,
  rfc3339ToNs,
  validatePodLogOptions,
} from '../src/index.js';

const parse = (q: string) => parsePodLogOptions(new URLSearchParams(q));

describe('PodLogOptions from a query', () => {
  it('decodes every field with Go bool and int syntax', () => {
    expect(
      parse('follow=true&previous=1&timestamps=T&tailLines=5&limitBytes=10&sinceSeconds=3'),
    ).toMatchObject({
      follow: true,
      previous: true,
      timestamps: true,
      tailLines: 5,
      limitBytes: 10,
      sinceSeconds: 3,
    });
    expect(parse('')).toEqual({
      follow: false,
      previous: false,
      timestamps: false,
      insecureSkipTLSVerifyBackend: false,
    });
  });

  it('maps the legacy tail parameter, tail=all meaning everything', () => {
    expect(parse('tail=7').tailLines).toBe(7);
    expect(parse('tail=all&tailLines=3').tailLines).toBeUndefined();
  });

  it('refuses values that do not decode', () => {
    expect(() => parse('sinceTime=garbage')).toThrow(PodLogOptionsDecodeError);
    expect(() => parse('sinceTime=garbage')).toThrow('parsing time "garbage"');
    expect(() => parse('tailLines=x')).toThrow('strconv.ParseInt: parsing "x": invalid syntax');
    expect(() => parse('follow=yes')).toThrow('strconv.ParseBool');
  });

  it('validates as ValidatePodLogOptions', () => {
    expect(validatePodLogOptions(parse('tailLines=-1'))).toEqual([
      'tailLines: Invalid value: -1: must be greater than or equal to 0',
    ]);
    expect(validatePodLogOptions(parse('limitBytes=0'))).toEqual([
      'limitBytes: Invalid value: 0: must be greater than 0',
    ]);
    expect(validatePodLogOptions(parse('sinceSeconds=0'))).toEqual([
      'sinceSeconds: Invalid value: 0: must be greater than 0',
    ]);
    expect(validatePodLogOptions(parse('sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z'))).toEqual([
      ': Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
    ]);
    expect(validatePodLogOptions(parse('tailLines=0&limitBytes=1&sinceSeconds=1'))).toEqual([]);
  });

  it('reads RFC 3339 timestamps to the nanosecond, with zones', () => {
    expect(rfc3339ToNs('1970-01-01T00:00:01.000000002Z')).toBe(1_000_000_002n);
    expect(rfc3339ToNs('1970-01-01T01:00:01+01:00')).toBe(1_000_000_000n);
    expect(rfc3339ToNs('nope')).toBeUndefined();
  });
});
