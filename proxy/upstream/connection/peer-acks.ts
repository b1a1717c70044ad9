/**
 * Whether the peer is still acknowledging what we send: the evidence that
 * tells a dead path from a resolver that is thinking (issue 42). A resolver
 * recursing a name for 2 s sends no answer, but its TCP acknowledges our
 * query within a round trip and a delayed ACK; a path that a NAT or firewall
 * forgot acknowledges nothing. TCP knows which: the bytes it holds
 * unacknowledged.
 *
 * Read from the kernel's table of TCP sockets (/proc/net/tcp, tcp6 for IPv6):
 * the socket's row, found by its inode (/proc/self/fd), has `tx_queue`, the
 * bytes written to the socket and not yet acknowledged by the peer. With the
 * bytes the connection handed to the socket before a query was written
 * (its raw socket's bytesWritten), that says whether anything from that query
 * on has been acknowledged:
 *
 *   acknowledged so far = bytes handed to the kernel - tx_queue
 *   acknowledged so far > bytes handed before the query ─► the peer acknowledged some of it (or later): alive
 *   otherwise, with tx_queue > 0                         ─► nothing since the query was acknowledged: silent
 *
 * Node has no getsockopt(TCP_INFO), and the sockopt addon the project uses
 * for quick ACKs (../quick-ack.ts) returns an int only: TCP_INFO's first four
 * bytes (state, congestion state, retransmissions, probes), which show a
 * loss only once TCP's own retransmission timer fired (200 ms at least).
 * The table has more, at a cost: the kernel walks its whole hash of
 * connections to print it, ~4.5 ms on a machine with 262,144 buckets (23 GB
 * of memory) however few sockets it holds. So it is read only when a query
 * has had no answer for longer than an ACK takes, off the event loop (a
 * file read in libuv's thread pool), and one read serves every socket that
 * asks meanwhile.
 *
 * Where the table can't be read (not Linux, no /proc), the evidence falls
 * back to what this process sees: bytes read from the connection since the
 * query was written. The pool then waits longer before it acts on it (hedge.ts).
 */
import fs from 'node:fs';
import type net from 'node:net';

/** 'silent': nothing written from the query on was acknowledged (or, without the kernel's view, nothing read since); 'acking': it was. */
export type PeerVerdict = 'acking' | 'silent';

/** Where a connection's verdicts come from: TCP's acknowledgements, or (where they can't be read) the bytes read. */
export type AckEvidence = 'tcp' | 'reads';

let evidence: AckEvidence | undefined;

/** Whether this system lets the kernel's acknowledgements be read (checked once). */
export function ackEvidence(): AckEvidence {
  if (evidence === undefined) {
    try {
      fs.accessSync('/proc/net/tcp', fs.constants.R_OK);
      fs.accessSync('/proc/self/fd', fs.constants.R_OK);
      evidence = process.platform === 'linux' ? 'tcp' : 'reads';
    } catch {
      evidence = 'reads';
    }
  }
  return evidence;
}

/** Reads under way, by file: each caller meanwhile shares one. */
const reads = new Map<string, Promise<string | undefined>>();

function readTable(file: string): Promise<string | undefined> {
  let read = reads.get(file);
  if (!read) {
    read = fs.promises.readFile(file, 'latin1').then(
      (text) => text,
      () => undefined,
    );
    reads.set(file, read);
    void read.then(() => reads.delete(file));
  }
  return read;
}

/** The inode of the socket behind `socket`'s file descriptor; undefined when it has none (closed). */
function inodeOf(socket: net.Socket): string | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } | null })._handle?.fd;
  if (fd === undefined || fd < 0) return undefined;
  try {
    return /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`))?.[1];
  } catch {
    return undefined;
  }
}

/** The `tx_queue` of the row for `inode` in a /proc/net/tcp{,6} table (fields: sl local remote st tx_queue:rx_queue tr:when retrnsmt uid timeout inode …). */
function txQueueOf(table: string, inode: string): number | undefined {
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[9] !== inode) continue;
    const tx = Number.parseInt((f[4] ?? '').split(':')[0] ?? '', 16);
    return Number.isFinite(tx) ? tx : undefined;
  }
  return undefined;
}

/** Bytes written to `socket`'s kernel side and not yet acknowledged by the peer; undefined when that can't be read. */
async function unackedBytes(socket: net.Socket): Promise<number | undefined> {
  if (ackEvidence() !== 'tcp') return undefined;
  const inode = inodeOf(socket);
  if (inode === undefined) return undefined;
  const table = await readTable(socket.remoteFamily === 'IPv6' ? '/proc/net/tcp6' : '/proc/net/tcp');
  return table === undefined ? undefined : txQueueOf(table, inode);
}

/** Where a query stood in its socket's byte streams when it was written. */
export interface StreamMark {
  /** Bytes handed to the socket before the query (its raw socket's bytesWritten). */
  readonly sentBefore: number;
  /** Bytes read from it by then. */
  readonly readBefore: number;
}

export function markOf(raw: net.Socket): StreamMark {
  return { sentBefore: raw.bytesWritten, readBefore: raw.bytesRead };
}

/**
 * Whether the peer acknowledged anything from the query marked `mark` on:
 * from the kernel's unacknowledged bytes where they can be read, else from
 * the bytes read since. Never throws.
 */
export async function peerVerdict(raw: net.Socket, mark: StreamMark): Promise<PeerVerdict> {
  const unacked = await unackedBytes(raw).catch(() => undefined);
  if (unacked === undefined) return raw.bytesRead > mark.readBefore ? 'acking' : 'silent';
  // Counted after the table was read: bytes written meanwhile make "acknowledged" look larger, never smaller.
  const handed = raw.bytesWritten - raw.writableLength;
  return unacked > 0 && handed - unacked <= mark.sentBefore ? 'silent' : 'acking';
}
