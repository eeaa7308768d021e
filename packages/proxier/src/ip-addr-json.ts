/**
 * iproute2's `ip -j addr show` output, read by the node manager (the local addresses of a
 * network namespace) and by `doctor` (the node's addresses).
 *
 * @module
 */

/** One address in `ip -j addr show`: its interface, the address, and its scope. */
export interface IpAddrShowAddress {
  /** `ifname` of the interface (`''` when absent). */
  readonly ifname: string;
  /** `local`: the address, without a prefix length. */
  readonly address: string;
  /** `scope`: `global`, `link`, `host`, … (`undefined` when absent). */
  readonly scope: string | undefined;
}

/**
 * The addresses in `ip -j addr show` output, interface by interface. Entries whose `local` is
 * missing or not a string are skipped.
 * @throws SyntaxError when the text is not a JSON array (iproute2 prints one, `[]` without links)
 */
export function parseIpAddrShowJson(text: string): IpAddrShowAddress[] {
  const doc: unknown = JSON.parse(text);
  if (!Array.isArray(doc)) throw new SyntaxError('`ip -j addr show` output is not a JSON array');
  return doc.flatMap((link: unknown) => {
    if (typeof link !== 'object' || link === null) return [];
    const { ifname, addr_info: info } = link as { ifname?: unknown; addr_info?: unknown };
    if (!Array.isArray(info)) return [];
    return info.flatMap((a: unknown) => {
      if (typeof a !== 'object' || a === null) return [];
      const { local, scope } = a as { local?: unknown; scope?: unknown };
      if (typeof local !== 'string' || local === '') return [];
      return [
        {
          ifname: typeof ifname === 'string' ? ifname : '',
          address: local,
          scope: typeof scope === 'string' ? scope : undefined,
        },
      ];
    });
  });
}
