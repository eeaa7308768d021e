/**
 * TCP traffic for real-kernel tests: a name-echoing server and a client that connects from
 * inside a network namespace, so a test sees which endpoint a service connection reached.
 * Everything runs in namespaces the test created (see `netns.ts`).
 */
import type { Netns } from './netns.js';

// A TCP server answering every connection with its name, then closing.
const SERVER = `const n=require('net');const s=n.createServer(c=>{c.end(process.argv[1]);});
s.listen(Number(process.argv[2]),process.argv[3],()=>process.stdout.write('ready\\n'));`;

/**
 * Starts a TCP server inside `ns` that answers every connection with `name` and closes it;
 * resolves once it listens on `host`:`port`. Stopped by PID through `ns.stop()`.
 */
export async function startNameServer(ns: Netns, name: string, port: number, host: string): Promise<void> {
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
  /** What the server answered (its name), when the connection succeeded. */
  readonly ok?: string;
  /** The error code (`ECONNREFUSED`, `TIMEOUT`...), when it failed. */
  readonly err?: string;
  /** How long the attempt took, in milliseconds. */
  readonly ms: number;
}

/** Connects `count` times, one after another, from inside `ns` to `host`:`port`. */
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
