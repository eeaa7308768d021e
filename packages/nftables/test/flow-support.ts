/** Runs packet-flow cases through the tracer for both layouts. */
import { expect } from 'vitest';
import {
  type NftLayout,
  type NftRenderOptions,
  renderNftables,
  tableFromText,
  tracePacket,
} from '../src/index.js';
import { type Cluster, NODE_IPS, snapshot, TEST_OPTIONS } from './helpers.js';

export interface FlowCase {
  name: string;
  sourceIP: string;
  destIP: string;
  destPort: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  /** Endpoint list joined by ', ', or REJECT / DROP / '' (untouched). */
  output: string;
  masq?: boolean;
}

export const LAYOUTS: readonly NftLayout[] = ['kube-proxy', 'optimized'];

export function runFlows(
  c: Cluster,
  cases: FlowCase[],
  options: NftRenderOptions = TEST_OPTIONS,
  family: 4 | 6 = 4,
): void {
  const { snap } = snapshot(c, family);
  for (const layout of LAYOUTS) {
    const text = renderNftables(snap, { ...options, layout });
    const table = tableFromText(text, family === 6 ? 'ip6' : 'ip');
    for (const k of cases) {
      const r = tracePacket(table, {
        sourceIP: k.sourceIP,
        destIP: k.destIP,
        destPort: k.destPort,
        ...(k.protocol ? { protocol: k.protocol } : {}),
        nodeIPs: family === 6 ? ['2001:db8::1', '2001:db8:1::2'] : NODE_IPS,
      });
      const got =
        r.outcome === 'endpoints' ? r.endpoints.join(', ') : r.outcome === 'untouched' ? '' : r.outcome;
      expect({ layout, name: k.name, output: got }).toEqual({ layout, name: k.name, output: k.output });
      if (r.outcome === 'endpoints')
        expect({ layout, name: k.name, masq: r.masquerade }).toEqual({
          layout,
          name: k.name,
          masq: k.masq ?? false,
        });
    }
  }
}
