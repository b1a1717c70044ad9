/**
 * A TCP relay on 127.0.0.1 in front of a real TLS server that swallows a
 * ClientHello bigger than `maxHelloBytes`, as a path that loses large first
 * flights does (a tunnel whose MTU is smaller than it says, a middlebox that
 * drops what doesn't fit one packet): TCP connects, the ClientHello goes,
 * and nothing ever comes back; the connection stays open. A ClientHello that
 * fits is passed on, and the connection relayed both ways. The size is the
 * first TLS record's (its header says how long it is). `serverBytes`: pass
 * on only that many of the server's bytes, then nothing (a server that
 * began to answer and stalled).
 */
import net from 'node:net';

export interface HelloFilter {
  readonly port: number;
  /** Sizes of the ClientHellos passed on, in order. */
  readonly passed: number[];
  /** Sizes of the ClientHellos swallowed, in order. */
  readonly swallowed: number[];
  close(): Promise<void>;
}

export async function startHelloFilter(targetPort: number, maxHelloBytes: number, serverBytes = Infinity): Promise<HelloFilter> {
  const sockets = new Set<net.Socket>();
  const passed: number[] = [];
  const swallowed: number[] = [];
  const track = (s: net.Socket): net.Socket => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    return s;
  };
  const server = net.createServer((client) => {
    track(client);
    let head = Buffer.alloc(0);
    const onFirst = (d: Buffer): void => {
      head = Buffer.concat([head, d]);
      if (head.length < 5) return;
      const size = 5 + head.readUInt16BE(3);
      if (size > maxHelloBytes) {
        // Swallowed: whatever else the client sends is read and dropped; the server never hears of it.
        swallowed.push(size);
        client.off('data', onFirst);
        client.on('data', () => undefined);
        return;
      }
      if (head.length < size) return;
      client.off('data', onFirst);
      passed.push(size);
      const upstream = track(net.connect(targetPort, '127.0.0.1'));
      upstream.write(head);
      client.pipe(upstream);
      let left = serverBytes;
      upstream.on('data', (d: Buffer) => {
        if (left > 0) client.write(d.subarray(0, left));
        left -= d.length;
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    };
    client.on('data', onFirst);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    passed,
    swallowed,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
