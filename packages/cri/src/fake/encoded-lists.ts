/**
 * Pre-encoded list responses. Listing 10,000 containers used to build 10,000 fresh message
 * objects (copying labels and annotations) and encode them all on every call; a list item
 * only changes with its record's state, so the fake keeps each item's encoding and a list
 * response is the concatenation of cached items, passed to grpc-js as bytes.
 *
 * @module
 */
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { Container, PodSandbox } from '../gen/runtime/v1/api.js';
import type { ContainerRecord, SandboxRecord } from './records.js';
import { toContainerItem, toSandboxItem } from './wire.js';

/**
 * A response already in wire form. Handlers answer with one (typed as the response message,
 * see {@link preEncoded}) and the serializer installed by {@link acceptPreEncoded} sends
 * its bytes unchanged.
 */
export class EncodedMessage {
  constructor(readonly bytes: Buffer) {}
}

/**
 * Passes `message` where a handler's response message type is expected. Only valid for
 * methods whose definition went through {@link acceptPreEncoded}.
 */
export function preEncoded<T>(message: EncodedMessage): T {
  return message as unknown as T;
}

/**
 * A copy of `service` whose `methods` accept an {@link EncodedMessage} as well as a message
 * object in their response serializer.
 */
export function acceptPreEncoded<S extends ServiceDefinition>(service: S, methods: readonly (keyof S)[]): S {
  const copy: Record<string, MethodDefinition<unknown, unknown>> = { ...service };
  for (const name of methods) {
    const method = service[name] as MethodDefinition<unknown, unknown>;
    const serialize = method.responseSerialize;
    copy[name as string] = {
      ...method,
      responseSerialize: (value: unknown) =>
        value instanceof EncodedMessage ? value.bytes : serialize(value),
    };
  }
  return copy as unknown as S;
}

interface CachedItem {
  /** The record state the bytes were encoded in; the only field of a list item that changes. */
  readonly state: number;
  readonly bytes: Uint8Array;
}

const containerItems = new WeakMap<ContainerRecord, CachedItem>();
const sandboxItems = new WeakMap<SandboxRecord, CachedItem>();

function containerBytes(c: ContainerRecord): Uint8Array {
  const cached = containerItems.get(c);
  if (cached?.state === c.state) return cached.bytes;
  const bytes = Container.encode(toContainerItem(c)).finish();
  containerItems.set(c, { state: c.state, bytes });
  return bytes;
}

function sandboxBytes(s: SandboxRecord): Uint8Array {
  const cached = sandboxItems.get(s);
  if (cached?.state === s.state) return cached.bytes;
  const bytes = PodSandbox.encode(toSandboxItem(s)).finish();
  sandboxItems.set(s, { state: s.state, bytes });
  return bytes;
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/**
 * A message whose only content is `items` as repeated field 1 (length-delimited): the wire
 * form of `ListContainersResponse`, `StreamContainersResponse`, `ListPodSandboxResponse` and
 * `StreamPodSandboxesResponse`, byte for byte what their generated `encode` writes.
 */
function repeatedField1(items: readonly Uint8Array[]): EncodedMessage {
  let total = 0;
  for (const item of items) total += 1 + varintSize(item.length) + item.length;
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  for (const item of items) {
    out[pos++] = 0x0a; // field 1, wire type 2
    let n = item.length;
    while (n >= 0x80) {
      out[pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    out[pos++] = n;
    out.set(item, pos);
    pos += item.length;
  }
  return new EncodedMessage(out);
}

/** The wire form of a container list response (`containers = 1`). */
export function encodeContainerList(records: readonly ContainerRecord[]): EncodedMessage {
  return repeatedField1(records.map(containerBytes));
}

/** The wire form of a sandbox list response (`items = 1` / `pod_sandboxes = 1`). */
export function encodeSandboxList(records: readonly SandboxRecord[]): EncodedMessage {
  return repeatedField1(records.map(sandboxBytes));
}
