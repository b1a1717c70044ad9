/**
 * What the unit tests of the network checks stand on (the DNS-interception
 * check, DDR's question, the one UDP question under both): a real UDP DNS
 * server on loopback that answers as the test says, and the real owner of
 * the network we're on, with a key the test moves. Both are cleaned up when
 * the test finishes.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { CurrentNetwork } from '../proxy/network/current-network.js';

export interface UdpDnsServer {
  readonly host: string;
  readonly port: number;
  /** Every datagram it was sent, in order. */
  readonly seen: Buffer[];
  /** Closed before the test ends (then nothing listens: ICMP port unreachable). */
  close(): void;
}

/** A UDP server on `at` (127.0.0.1) that sends back what `reply` makes of each datagram (nothing: []), after `delayMs`. */
export async function udpDnsServer(reply: (query: Buffer) => Buffer[], o: { at?: string; delayMs?: number } = {}): Promise<UdpDnsServer> {
  const s = dgram.createSocket('udp4');
  let open = true;
  const close = (): void => {
    if (open) s.close();
    open = false;
  };
  onTestFinished(close);
  const seen: Buffer[] = [];
  s.on('message', (msg, rinfo) => {
    seen.push(msg);
    const out = reply(msg);
    const send = (): void => {
      for (const b of out) if (open) s.send(b, rinfo.port, rinfo.address);
    };
    if (o.delayMs) setTimeout(send, o.delayMs);
    else send();
  });
  const host = o.at ?? '127.0.0.1';
  await new Promise<void>((r) => s.bind(0, host, r));
  return { host, port: (s.address() as AddressInfo).port, seen, close };
}

/** The network we're on (a real networks.json in a temporary directory), known by `key.current`: change it and call moved(). */
export function networkWithKey(key: { current: string }): CurrentNetwork {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-network-check-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return new CurrentNetwork({ file: path.join(dir, 'networks.json'), identify: () => ({ key: key.current, final: true }), gateway: () => '10.53.1.1' });
}
