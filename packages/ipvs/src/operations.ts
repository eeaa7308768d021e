/**
 * The incremental operations that turn one IPVS state into another, as data. Executors apply
 * them in order; `diffIpvs` produces them.
 *
 * @module
 */
import type { IPSet, RealServer, RealServerId, VirtualServerId, VirtualServerSpec } from './model.js';

/** The header of a set to create (its entries are added by `ipset-add` operations). */
export type IPSetHeader = Omit<IPSet, 'entries'>;

/** One step of a reconciliation. */
export type IpvsOperation =
  | { readonly kind: 'create-ipset'; readonly set: IPSetHeader }
  | { readonly kind: 'destroy-ipset'; readonly name: string }
  | { readonly kind: 'ipset-add'; readonly set: string; readonly entry: string }
  | { readonly kind: 'ipset-del'; readonly set: string; readonly entry: string }
  | { readonly kind: 'bind-address'; readonly address: string }
  | { readonly kind: 'unbind-address'; readonly address: string }
  | { readonly kind: 'add-virtual-server'; readonly virtualServer: VirtualServerSpec }
  | { readonly kind: 'update-virtual-server'; readonly virtualServer: VirtualServerSpec }
  | { readonly kind: 'delete-virtual-server'; readonly virtualServer: VirtualServerId }
  | {
      readonly kind: 'add-real-server';
      readonly virtualServer: VirtualServerId;
      readonly realServer: RealServer;
    }
  | {
      readonly kind: 'update-real-server';
      readonly virtualServer: VirtualServerId;
      readonly realServer: RealServer;
    }
  | {
      readonly kind: 'delete-real-server';
      readonly virtualServer: VirtualServerId;
      readonly realServer: RealServerId;
    };

/** Which tool applies an operation. */
export type OperationBackend = 'ipset' | 'ipvs' | 'address';

/** The backend of an operation. */
export function operationBackend(op: IpvsOperation): OperationBackend {
  switch (op.kind) {
    case 'create-ipset':
    case 'destroy-ipset':
    case 'ipset-add':
    case 'ipset-del':
      return 'ipset';
    case 'bind-address':
    case 'unbind-address':
      return 'address';
    default:
      return 'ipvs';
  }
}

/** True for the operations that touch ipsets (the part that runs on this kernel). */
export function isIpsetOperation(op: IpvsOperation): boolean {
  return operationBackend(op) === 'ipset';
}
