// Probe targets for the benchmark, in their own process so the benchmark's CPU figures are the
// prober's: HTTP servers answering 200 "ok" and plain TCP listeners, on loopback.
// Prints one JSON line {"http":[ports],"tcp":[ports]} and runs until killed.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';

const count = Number(process.argv[2] ?? 4);
const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', 4096, () => resolve(server.address().port)));
const http = [];
const tcp = [];
for (let i = 0; i < count; i++) {
  http.push(await listen(createHttpServer((_req, res) => res.end('ok'))));
  tcp.push(await listen(createNetServer((socket) => socket.on('error', () => {}).end())));
}
process.stdout.write(`${JSON.stringify({ http, tcp })}\n`);
// Ends with its parent: a benchmark killed by a timeout must not leave the servers behind.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();
