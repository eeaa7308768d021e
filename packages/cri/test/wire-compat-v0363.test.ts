// Wire compatibility with kubernetes/cri-api v0.36.3 (pkg/apis/runtime/v1/api.proto):
// `KeyValue.value` is `bytes` (it was `string` in v0.36.0; same wire type, so both peers
// interoperate), and `ExecRequest`/`AttachRequest` have no field 7/6 (no upstream release
// assigned them; an audit ID field there once was this project's invention).
import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { AttachRequest, ExecRequest, KeyValue } from '../src/gen/runtime/v1/api.js';

function fieldNumbers(bytes: Uint8Array): number[] {
  const reader = new BinaryReader(bytes);
  const out: number[] = [];
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    out.push(tag >>> 3);
    reader.skip(tag & 7);
  }
  return out;
}

describe('KeyValue.value is bytes (cri-api v0.36.3)', () => {
  it('round-trips bytes that are not UTF-8', () => {
    const value = Buffer.from([0x41, 0xff, 0xfe, 0x00, 0x42]);
    const decoded = KeyValue.decode(KeyValue.encode({ key: 'BIN', value }).finish());
    expect([...decoded.value]).toEqual([...value]);
  });

  it('reads what a v0.36.0 peer sent as a string field (same wire type 2)', () => {
    const w = new BinaryWriter();
    w.uint32((1 << 3) | 2).string('TEXT');
    w.uint32((2 << 3) | 2).string('héllo');
    const decoded = KeyValue.decode(w.finish());
    expect(decoded.key).toBe('TEXT');
    expect(Buffer.from(decoded.value).toString('utf8')).toBe('héllo');
  });

  it('encodes field 2 with wire type 2 (length-delimited), as upstream', () => {
    const bytes = KeyValue.encode({ key: 'K', value: Buffer.from('v') }).finish();
    expect([...bytes]).toEqual([0x0a, 1, 0x4b, 0x12, 1, 0x76]);
  });
});

describe('no field upstream has not assigned', () => {
  it('ExecRequest carries fields 1–6 only; a field 7 from elsewhere is skipped as unknown', () => {
    const req = { containerId: 'c', cmd: ['sh'], tty: true, stdin: true, stdout: true, stderr: false };
    expect(new Set(fieldNumbers(ExecRequest.encode(req).finish()))).toEqual(new Set([1, 2, 3, 4, 5]));
    expect(Object.keys(ExecRequest.fromPartial({})).sort()).toEqual(
      ['cmd', 'containerId', 'stderr', 'stdin', 'stdout', 'tty'].sort(),
    );
    const w = new BinaryWriter();
    w.uint32((1 << 3) | 2).string('c');
    w.uint32((7 << 3) | 2).string('audit-1');
    expect(ExecRequest.decode(w.finish())).toEqual(ExecRequest.fromPartial({ containerId: 'c' }));
  });

  it('AttachRequest carries fields 1–5 only', () => {
    expect(Object.keys(AttachRequest.fromPartial({})).sort()).toEqual(
      ['containerId', 'stderr', 'stdin', 'stdout', 'tty'].sort(),
    );
    const w = new BinaryWriter();
    w.uint32((1 << 3) | 2).string('c');
    w.uint32((6 << 3) | 2).string('audit-1');
    expect(AttachRequest.decode(w.finish())).toEqual(AttachRequest.fromPartial({ containerId: 'c' }));
  });
});
