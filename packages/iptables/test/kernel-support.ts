/** Helpers for the real-kernel tests: TCP servers/clients in namespaces, semantic iptables-save. */
import type { Netns } from '../../../test/support/netns.js';

// A TCP server answering every connection with its name, then closing.
const SERVER = `const n=require('net');const s=n.createServer(c=>{c.end(process.argv[1]);});
s.listen(Number(process.argv[2]),process.argv[3],()=>process.stdout.write('ready\\n'));`;

/** Starts a name-echoing TCP server inside `ns`; resolves once it listens. Stopped by `ns.stop()`. */
export async function startNameServer(
  ns: Netns,
  name: string,
  port: number,
  host = '0.0.0.0',
): Promise<void> {
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

/** One connection attempt's result. */
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
 * iptables-save output reduced to its meaning for comparison: per table, chain → rules,
 * ignoring chain order, counters and comments lines. (Rule order inside a chain matters.)
 */
export function saveMeaning(save: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let table: Record<string, string[]> | undefined;
  for (const line of save.split('\n')) {
    if (line.startsWith('#') || line === '' || line === 'COMMIT') continue;
    if (line.startsWith('*')) {
      table = {};
      out[line.slice(1)] = table;
    } else if (line.startsWith(':')) table![line.slice(1).split(' ')[0]!] ??= [];
    else if (line.startsWith('-A ')) {
      const chain = line.split(' ')[1]!;
      table![chain] = [...(table![chain] ?? []), line];
    }
  }
  for (const t of Object.values(out)) {
    const sorted = Object.fromEntries(Object.entries(t).sort(([a], [b]) => (a < b ? -1 : 1)));
    for (const k of Object.keys(t)) delete t[k];
    Object.assign(t, sorted);
  }
  return out;
}
