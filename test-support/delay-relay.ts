/**
 * A TCP relay on 127.0.0.1 that adds a fixed delay each way, in front of a
 * real server (unbound): a link with a longer round trip, for tests that
 * compare resolvers by latency without network namespaces. Each chunk is
 * forwarded `oneWayMs` after it arrived, in order; closes and resets are
 * passed on. Not a fault injector: bytes are never changed or dropped.
 */
import net from 'node:net';

export interface DelayRelay {
  readonly port: number;
  close(): Promise<void>;
}

export async function startDelayRelay(targetPort: number, oneWayMs: number, targetHost = '127.0.0.1'): Promise<DelayRelay> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, oneWayMs);
    timers.add(t);
  };
  const pipe = (from: net.Socket, to: net.Socket): void => {
    from.on('data', (chunk: Buffer) => later(() => to.writable && to.write(chunk)));
    from.on('end', () => later(() => to.end()));
    from.on('error', () => later(() => to.destroy()));
    from.on('close', () => later(() => to.destroy()));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => sockets.delete(s));
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
