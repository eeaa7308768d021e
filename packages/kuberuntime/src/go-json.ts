/**
 * JSON for the kubelet's container annotations, byte-compatible with Go's `json.Marshal` of
 * the API structs: struct field order, `omitempty`, and HTML-safe escaping of `<`, `>`, `&`.
 *
 * @module
 */
import type { V1ContainerPort, V1LifecycleHandler } from '@kubernetes/client-node';

function str(value: string): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

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
