/**
 * crictl-style human formatting: relative ages ("5 minutes ago"), decimal sizes ("4.26MB"),
 * truncated IDs and aligned tables.
 *
 * @module
 */

/** crictl shows the first 13 characters of IDs in tables. */
export function truncateId(id: string): string {
  const bare = id.startsWith('sha256:') ? id.slice('sha256:'.length) : id;
  return bare.slice(0, 13);
}

/** Docker/crictl's HumanDuration wording of a non-negative duration. */
export function humanDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 1) return 'Less than a second';
  if (seconds === 1) return '1 second';
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.round(seconds / 60);
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(minutes / 60);
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`;
  return `${Math.floor(hours / 24 / 365)} years`;
}

/** "N units ago" for a CRI timestamp in ns since the epoch. */
export function ago(nowMs: number, createdAtNs: bigint): string {
  if (createdAtNs <= 0n) return 'Unknown';
  const createdMs = Number(createdAtNs / 1_000_000n);
  return `${humanDuration(Math.max(0, nowMs - createdMs))} ago`;
}

/** Decimal (SI) size with 3 significant digits: 4260000 → "4.26MB". */
export function humanSize(bytes: bigint | number): string {
  let value = Number(bytes);
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${Number(value.toPrecision(3))}${units[unit]}`;
}

/** Left-aligned columns separated by three spaces, like crictl's tabwriter output. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
