/**
 * Reading Services, EndpointSlices, Nodes and ServiceCIDRs from manifest text (YAML, multi-document, or
 * JSON, including `List` objects) for command-line tools and tests.
 *
 * @module
 */
import type { V1EndpointSlice, V1Node, V1Service, V1ServiceCIDR } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

/** A document (or list item) that could not be read. */
export class ManifestError extends Error {
  /**
   * @param documentIndex - 0-based index of the document in the text.
   * @param detail - What is wrong.
   */
  constructor(
    readonly documentIndex: number,
    readonly detail: string,
  ) {
    super(`manifest document ${documentIndex}: ${detail}`);
    this.name = 'ManifestError';
  }
}

/** What {@link parseManifests} found. */
export interface ParsedManifests {
  /** `kind: Service` objects, in document order. */
  readonly services: readonly V1Service[];
  /** `kind: EndpointSlice` objects, in document order. */
  readonly endpointSlices: readonly V1EndpointSlice[];
  /** `kind: Node` objects, in document order. */
  readonly nodes: readonly V1Node[];
  /** `kind: ServiceCIDR` objects (`networking.k8s.io/v1`), in document order. */
  readonly serviceCIDRs: readonly V1ServiceCIDR[];
  /** Objects of other kinds, skipped (`kind/name`). */
  readonly ignored: readonly string[];
  /** Documents that could not be read; the others are still returned. */
  readonly errors: readonly ManifestError[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses manifest text: YAML documents separated by `---`, or JSON (a JSON document is YAML);
 * `List`-kind objects (`v1/List`, `ServiceList`, `EndpointSliceList`, …) and top-level arrays
 * are flattened. Objects are returned as plain JSON, not validated here: `@nodeagent/proxy-state`'s
 * `ProxyState` handlers (`parseService`, `parseEndpointSlice`) validate them, wrong-typed
 * fields included.
 *
 * @example
 * ```ts
 * const { services, endpointSlices, errors } = parseManifests(fs.readFileSync('cluster.yaml', 'utf8'));
 * ```
 */
export function parseManifests(text: string): ParsedManifests {
  const services: V1Service[] = [];
  const endpointSlices: V1EndpointSlice[] = [];
  const nodes: V1Node[] = [];
  const serviceCIDRs: V1ServiceCIDR[] = [];
  const ignored: string[] = [];
  const errors: ManifestError[] = [];
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      errors.push(new ManifestError(index, doc.errors.map((e) => e.message).join('; ')));
      return;
    }
    const visit = (value: unknown): void => {
      if (value === null || value === undefined) return;
      if (Array.isArray(value)) {
        value.forEach(visit);
        return;
      }
      if (!isObject(value) || typeof value.kind !== 'string') {
        errors.push(new ManifestError(index, 'not a Kubernetes object (no kind)'));
        return;
      }
      const kind = value.kind;
      if (kind === 'Service') services.push(value as unknown as V1Service);
      else if (kind === 'EndpointSlice') endpointSlices.push(value as unknown as V1EndpointSlice);
      else if (kind === 'Node') nodes.push(value as unknown as V1Node);
      else if (kind === 'ServiceCIDR') serviceCIDRs.push(value as unknown as V1ServiceCIDR);
      else if (kind.endsWith('List') && Array.isArray(value.items)) {
        const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
        for (const item of value.items) {
          // Typed lists (ServiceList) omit the kind on their items.
          visit(
            isObject(item) && item.kind === undefined && itemKind !== undefined
              ? { ...item, kind: itemKind }
              : item,
          );
        }
      } else {
        const name =
          isObject(value.metadata) && typeof value.metadata.name === 'string' ? value.metadata.name : '';
        ignored.push(`${kind}/${name}`);
      }
    };
    visit(doc.toJS({ maxAliasCount: 100 }));
  });
  return { services, endpointSlices, nodes, serviceCIDRs, ignored, errors };
}
