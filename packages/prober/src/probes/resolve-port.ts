/**
 * Probe ports: a number, or a container port name (upstream `probe.ResolveContainerPort`).
 *
 * @module
 */
import type { V1Container } from '@kubernetes/client-node';

/**
 * The port number of `port` for `container`: a number as is; a string names one of the
 * container's ports, else is parsed as a number (upstream's "last ditch effort"). Throws with
 * upstream's messages (`invalid port number: 0`, `strconv.Atoi: parsing "web": invalid syntax`).
 */
export function resolveContainerPort(port: unknown, container: V1Container): number {
  let value: number;
  if (port === undefined || port === null) value = 0;
  else if (typeof port === 'number') value = port;
  else if (typeof port === 'string') {
    const named = (container.ports ?? []).find((p) => p.name === port);
    value = named === undefined ? atoi(port) : Number(named.containerPort);
  } else throw new Error(`intOrString had no kind: ${JSON.stringify(port)}`);
  if (Number.isInteger(value) && value > 0 && value < 65536) return value;
  throw new Error(`invalid port number: ${value}`);
}

/** Go's `strconv.Atoi`, with its error texts. */
function atoi(text: string): number {
  if (!/^[+-]?\d+$/.test(text))
    throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = Number(text);
  if (!Number.isSafeInteger(n))
    throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range`);
  return n;
}
