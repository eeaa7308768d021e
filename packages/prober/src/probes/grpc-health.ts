/**
 * The client side of `grpc.health.v1.Health/Check`, hand-encoded: the request has one string
 * field (`service` = 1) and the response one enum (`status` = 1). `@nodeagent/cri` generates
 * the same protocol but does not export it; a two-field codec is smaller than a dependency on
 * its generated internals.
 *
 * @module
 */

/** The serving states of `HealthCheckResponse.ServingStatus`, by number. */
export const SERVING_STATUS_NAMES: readonly string[] = [
  'UNKNOWN',
  'SERVING',
  'NOT_SERVING',
  'SERVICE_UNKNOWN',
];

/** The method path of the health check. */
export const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';

/** Encodes `HealthCheckRequest{service}`. */
export function encodeHealthCheckRequest(service: string): Buffer {
  if (service === '') return Buffer.alloc(0);
  const text = Buffer.from(service, 'utf8');
  return Buffer.concat([Buffer.from([0x0a]), varint(text.length), text]);
}

/** Decodes `HealthCheckResponse`, returning its `status` number (0 when absent); skips unknown fields. */
export function decodeHealthCheckResponse(data: Buffer): number {
  let status = 0;
  let i = 0;
  const readVarint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = data[i++];
      if (byte === undefined) throw new Error('truncated HealthCheckResponse');
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
      shift += 7;
    }
  };
  while (i < data.length) {
    const key = readVarint();
    const wire = key & 7;
    if (wire === 0) {
      const v = readVarint();
      if (key >>> 3 === 1) status = v;
    } else if (wire === 2) i += readVarint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`unsupported wire type ${wire} in HealthCheckResponse`);
  }
  return status;
}

/** The name upstream prints for a status (`%q` of the enum's `String()`). */
export function servingStatusName(status: number): string {
  return SERVING_STATUS_NAMES[status] ?? String(status);
}

function varint(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}
