/**
 * JSON for the kubelet's container annotations, byte-compatible with Go's `json.Marshal` of
 * the API structs: struct field order, `omitempty`, and HTML-safe escaping of `<`, `>`, `&`.
 *
 * @module
 */
import type { V1ContainerPort, V1LifecycleHandler } from '@kubernetes/client-node';

const HEX = '0123456789abcdef';

/**
 * A string as Go's `encoding/json` writes it with HTML escaping on (Go 1.22+): `<`, `>`, `&`,
 * U+2028 and U+2029 as `\u` escapes, `\b \f \n \r \t` short, other control characters as
 * `\u00xx`, and an unpaired surrogate (invalid UTF-8 in Go) as `\ufffd`.
 */
export function goJsonString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = value.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += value[i] + (value[i + 1] ?? '');
        i++;
      } else {
        out += '\\ufffd';
      }
      continue;
    }
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && c !== 0x3c && c !== 0x3e && c !== 0x26) {
      out += c === 0x2028 || c === 0x2029 ? `\\u${c.toString(16)}` : value[i];
      continue;
    }
    switch (c) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += '\\\\';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0d:
        out += '\\r';
        break;
      case 0x09:
        out += '\\t';
        break;
      default:
        out += `\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`;
    }
  }
  return `${out}"`;
}

const str = goJsonString;

function intOrString(value: number | string): string {
  return typeof value === 'number' ? String(value) : str(value);
}

/** Fields as `"key":value` pairs, skipping undefined ones (omitempty was decided by the caller). */
function object(fields: readonly (readonly [string, string | undefined])[]): string {
  const parts = fields.filter(([, v]) => v !== undefined).map(([k, v]) => `${str(k)}:${v}`);
  return `{${parts.join(',')}}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : str(value);
}

/** `[]ContainerPort` as Go marshals it. */
export function goJsonContainerPorts(ports: readonly V1ContainerPort[]): string {
  const items = ports.map((p) =>
    object([
      ['name', nonEmpty(p.name)],
      ['hostPort', p.hostPort ? String(p.hostPort) : undefined],
      ['containerPort', String(p.containerPort ?? 0)],
      ['protocol', nonEmpty(p.protocol ?? 'TCP')],
      ['hostIP', nonEmpty(p.hostIP)],
    ]),
  );
  return `[${items.join(',')}]`;
}

/** A `LifecycleHandler` as Go marshals it. */
export function goJsonLifecycleHandler(handler: V1LifecycleHandler): string {
  const exec =
    handler.exec === undefined
      ? undefined
      : object([
          [
            'command',
            handler.exec.command?.length ? `[${handler.exec.command.map(str).join(',')}]` : undefined,
          ],
        ]);
  const h = handler.httpGet;
  const httpGet =
    h === undefined
      ? undefined
      : object([
          ['path', nonEmpty(h.path)],
          ['port', intOrString(h.port)],
          ['host', nonEmpty(h.host)],
          ['scheme', nonEmpty(h.scheme)],
          [
            'httpHeaders',
            h.httpHeaders?.length
              ? `[${h.httpHeaders
                  .map((x) =>
                    object([
                      ['name', str(x.name)],
                      ['value', str(x.value)],
                    ]),
                  )
                  .join(',')}]`
              : undefined,
          ],
        ]);
  const t = handler.tcpSocket;
  const tcpSocket =
    t === undefined
      ? undefined
      : object([
          ['port', intOrString(t.port)],
          ['host', nonEmpty(t.host)],
        ]);
  const sleep =
    handler.sleep === undefined ? undefined : object([['seconds', String(handler.sleep.seconds)]]);
  return object([
    ['exec', exec],
    ['httpGet', httpGet],
    ['tcpSocket', tcpSocket],
    ['sleep', sleep],
  ]);
}
