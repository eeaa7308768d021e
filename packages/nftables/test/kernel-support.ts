/** Helpers for the real-kernel tests: TCP servers/clients inside namespaces, nft JSON by meaning. */
import type { Netns } from '../../../test/support/netns.js';

// A TCP server answering every connection with its name, then closing.
const SERVER = `const n=require('net');const s=n.createServer(c=>{c.end(process.argv[1]);});
s.listen(Number(process.argv[2]),process.argv[3],()=>process.stdout.write('ready\\n'));`;

/** Starts a name-echoing TCP server inside `ns` (stopped by PID through `ns.stop()`). */
export async function startNameServer(ns: Netns, name: string, port: number, host = '::'): Promise<void> {
  const child = ns.spawn([process.execPath, '-e', SERVER, name, String(port), host]);
  const out = child.stdout!;
  out.setEncoding('utf8');
  let buf = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: string) => {
      buf += d;
      if (buf.includes('ready')) {
        out.off('data', onData);
        resolve();
      }
    };
    out.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server ${name} exited ${code}`)));
  });
}

// Connects `count` times, printing one JSON line per attempt: the answer or the error code.
const CLIENT = `const n=require('net');const [host,port,count]=process.argv.slice(1);
(async()=>{for(let i=0;i<Number(count);i++){await new Promise(r=>{const t0=Date.now();let d='';
const s=n.connect({host,port:Number(port),timeout:3000});s.setEncoding('utf8');
s.on('data',x=>d+=x);s.on('end',()=>{console.log(JSON.stringify({ok:d,ms:Date.now()-t0}));r();});
s.on('timeout',()=>{console.log(JSON.stringify({err:'TIMEOUT',ms:Date.now()-t0}));s.destroy();r();});
s.on('error',e=>{console.log(JSON.stringify({err:e.code,ms:Date.now()-t0}));r();});});}})();`;

/** One connection attempt. */
export interface ConnectResult {
  readonly ok?: string;
  readonly err?: string;
  readonly ms: number;
}

/** Connects `count` times from inside `ns` to host:port. */
export async function connectFrom(
  ns: Netns,
  host: string,
  port: number,
  count = 1,
): Promise<ConnectResult[]> {
  const r = await ns.exec([process.execPath, '-e', CLIENT, host, String(port), String(count)], {
    timeoutMs: 60_000,
  });
  if (r.code !== 0) throw new Error(`client failed: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ConnectResult);
}

/**
 * `nft -j list table` reduced to its meaning: chains → rules (without handles), sets → sorted
 * elements; order of objects ignored, order of rules kept.
 */
export function tableMeaning(json: unknown): unknown {
  const items = (json as { nftables: Record<string, Record<string, unknown>>[] }).nftables;
  const chains: Record<string, unknown[]> = {};
  const sets: Record<string, unknown> = {};
  const strip = (o: Record<string, unknown>) => {
    const { handle: _h, ...rest } = o;
    return rest;
  };
  for (const it of items) {
    if (it.chain) chains[it.chain.name as string] ??= [];
    if (it.rule) {
      const list = chains[it.rule.chain as string] ?? [];
      chains[it.rule.chain as string] = list;
      list.push(JSON.stringify(strip(it.rule)));
    }
    const s = it.set ?? it.map;
    if (s) {
      const { handle: _h, elem, ...rest } = s;
      // Elements with an expiry (session affinity) are runtime state written by packets, not by syncs.
      const written = ((elem as unknown[]) ?? [])
        .map((e) => JSON.stringify(e))
        .filter((e) => !e.includes('"expires"'));
      sets[s.name as string] = { ...rest, elem: written.sort() };
    }
  }
  const sort = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { chains: sort(chains), sets: sort(sets) };
}

/** Paths where two meanings differ (for readable failures). */
export function meaningDiff(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null ||
    Array.isArray(a) ||
    Array.isArray(b)
  ) {
    return [`${path}: ${JSON.stringify(a)?.slice(0, 300)} != ${JSON.stringify(b)?.slice(0, 300)}`];
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) =>
    meaningDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`),
  );
}
