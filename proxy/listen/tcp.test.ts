/**
 * TCP clients' lifecycle through dotstub (in-process, real sockets, real
 * unbound upstream): messages that get no reply never silence a connection,
 * a half-closed client gets its answers and then the close, idle clients
 * are closed, the number of clients is bounded, and closed clients leave no
 * file descriptor behind.
 */
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openFds, queryBytes, RawTcpConnection, settlesWithin } from '../../test-support/dns-client.js';
import { startProxy, waitFor, type Harness } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { frame } from '../dns/framing.js';
import { ClientShares } from './client-shares.js';
import { TcpListener } from './tcp.js';

let unbound: UnboundServer;
let h: Harness;

beforeAll(async () => {
  unbound = await startUnbound({ names: 100 });
  h = await startProxy({ resolverArg: unbound.resolverArg });
  await waitFor(() => h.proxy.privacy.state.state === 'private', 10_000, 'private state');
});
afterAll(async () => {
  await h?.stop();
  await unbound?.stop();
});

const response = (id: number): Buffer => {
  const q = Buffer.from(queryBytes('n1.test', { id }));
  q.writeUInt16BE(q.readUInt16BE(2) | 0x8000, 2);
  return q;
};

describe('messages that get no reply', () => {
  test('300 of them (responses, empty and short frames) end the connection instead of silencing it', async () => {
    const c = await RawTcpConnection.open(h.port);
    try {
      c.send(queryBytes('n1.test', { id: 1 }));
      await c.waitForMessages(1);
      const garbage: Buffer[] = [];
      for (let i = 0; i < 100; i++) garbage.push(response(1000 + i), Buffer.alloc(0), Buffer.alloc(5, 0xff));
      for (const g of garbage) c.send(g);
      c.send(queryBytes('n2.test', { id: 2 }));
      // Answer or close, never hang: the proxy closes the connection.
      expect(await settlesWithin(c.closed, 3000)).toBe(true);
    } finally {
      c.destroy();
    }
  });

  test('queries before the first such message are still answered, then the connection closes', async () => {
    const c = await RawTcpConnection.open(h.port);
    try {
      for (let i = 0; i < 20; i++) c.send(queryBytes(`n${i}.test`, { id: 100 + i }));
      c.send(response(7));
      await c.waitForMessages(20);
      expect(new Set(c.messages.map((m) => m.readUInt16BE(0)))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => 100 + i)));
      expect(await settlesWithin(c.closed, 3000)).toBe(true);
    } finally {
      c.destroy();
    }
  });
});

describe('half-closed clients (RFC 7766 §6.2.3)', () => {
  test('a client that sends FIN right after its queries gets every answer, then our FIN', async () => {
    const c = await RawTcpConnection.open(h.port);
    try {
      for (let i = 0; i < 50; i++) c.send(queryBytes(`n${i}.test`, { id: i + 1 }));
      c.end();
      await c.waitForMessages(50, 5000);
      for (const m of c.messages) expect(dnsPacket.decode(m).answers?.length).toBe(1);
      expect(await settlesWithin(c.closed, 2000)).toBe(true);
    } finally {
      c.destroy();
    }
  });
});

describe('many connections', () => {
  test('2,000 connections that query, half-close, send garbage or vanish leave no descriptor behind', async () => {
    const before = openFds();
    const kinds = ['query-and-close', 'half-close', 'garbage', 'vanish'] as const;
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const c = await RawTcpConnection.open(h.port);
          const kind = kinds[(batch * 100 + i) % kinds.length];
          if (kind === 'query-and-close') {
            c.send(queryBytes('n1.test', { id: i + 1 }));
            await c.waitForMessages(1).catch(() => undefined);
            c.destroy();
          } else if (kind === 'half-close') {
            c.send(queryBytes('n2.test', { id: i + 1 }));
            c.end();
            await settlesWithin(c.closed, 5000);
          } else if (kind === 'garbage') {
            c.write(Buffer.from([0, 3, 1, 2, 3, 0, 0]));
            await settlesWithin(c.closed, 5000);
          } else {
            c.send(queryBytes('n3.test', { id: i + 1 }).subarray(0, 9));
            c.destroy();
          }
          c.destroy();
        }),
      );
    }
    // Sockets on our side close as the clients' do; allow a moment for the last closes.
    await waitFor(() => openFds() <= before, 3000, `fds back to ${before} (now ${openFds()})`);
  });
});

describe('the listener on its own (a handler that answers at once)', () => {
  const echo = (raw: Buffer, _t: 'udp' | 'tcp', reply: (a: Buffer) => void): boolean => {
    if (raw.length < 12) return false;
    reply(raw);
    return true;
  };

  async function listener(options: { idleMs?: number; maxClients?: number }): Promise<{ tcp: TcpListener; port: number }> {
    const tcp = new TcpListener({ host: '127.0.0.1', port: 0 }, echo, new ClientShares(() => 1000), options);
    const { port } = await tcp.listen();
    return { tcp, port };
  }

  test('an idle client is closed after the idle timeout; a busy one is not', async () => {
    const { tcp, port } = await listener({ idleMs: 200 });
    const idle = await RawTcpConnection.open(port);
    const busy = await RawTcpConnection.open(port);
    const chatter = setInterval(() => busy.send(queryBytes('x.test', { id: 1 })), 50);
    try {
      expect(await settlesWithin(idle.closed, 2000)).toBe(true);
      expect(busy.socket.destroyed).toBe(false);
      await waitFor(() => tcp.clientCount === 1, 1000, 'one client left');
    } finally {
      clearInterval(chatter);
      idle.destroy();
      busy.destroy();
      tcp.destroyClients();
      await tcp.close();
    }
  });

  test('beyond the client limit the longest-idle client is closed for the newcomer', async () => {
    const { tcp, port } = await listener({ maxClients: 3 });
    const conns: RawTcpConnection[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const c = await RawTcpConnection.open(port);
        c.send(queryBytes('x.test', { id: i + 1 }));
        await c.waitForMessages(1);
        conns.push(c);
      }
      // conns[0] is the longest idle once the others have spoken again.
      for (const c of conns.slice(1)) {
        c.send(queryBytes('x.test', { id: 9 }));
        await c.waitForMessages(2);
      }
      const newcomer = await RawTcpConnection.open(port);
      conns.push(newcomer);
      newcomer.send(queryBytes('x.test', { id: 4 }));
      await newcomer.waitForMessages(1);
      expect(await settlesWithin(conns[0]?.closed ?? Promise.reject(new Error('no conn')), 1000)).toBe(true);
      expect(conns[1]?.socket.destroyed).toBe(false);
      await waitFor(() => tcp.clientCount === 3, 1000, 'three clients');
    } finally {
      for (const c of conns) c.destroy();
      tcp.destroyClients();
      await tcp.close();
    }
  });

  test('a client that never reads its answers stops being read from (bounded memory) and is closed when idle', async () => {
    let handled = 0;
    const counting = (raw: Buffer, t: 'udp' | 'tcp', reply: (a: Buffer) => void): boolean => {
      handled++;
      return echo(raw, t, reply);
    };
    const tcp = new TcpListener({ host: '127.0.0.1', port: 0 }, counting, new ClientShares(() => 1000), { idleMs: 500 });
    const { port } = await tcp.listen();
    const s = net.connect({ port, host: '127.0.0.1' });
    s.on('error', () => undefined);
    await new Promise((r) => s.once('connect', r));
    s.pause();
    const q = frame(Buffer.alloc(1000, 1));
    // 40 MB of queries, never reading an answer. A listener that kept reading would hold 40 MB of answers for us.
    for (let i = 0; i < 40_000; i++) s.write(q);
    const closed = new Promise((r) => s.once('close', r));
    try {
      // The idle deadline closes the connection once reading has stopped; by then every query the listener
      // read has been handled: what the kernel buffers take (a few MB each way), not the 40,000.
      expect(await settlesWithin(closed, 5000)).toBe(true);
      expect(handled).toBeLessThan(15_000);
    } finally {
      s.destroy();
      await tcp.close();
    }
  });
});
