/** A loopback TCP port for servers a test starts. */
import { type AddressInfo, createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nobody listens on right now (bound, then released). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
