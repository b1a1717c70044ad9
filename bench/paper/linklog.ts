/**
 * Reading linkemu's frame log: one line a frame,
 * `t_ms dir verdict len proto src:port>dst:port tcpflags seq ack paylen`,
 * after a `# t0_realtime SEC.NSEC` header. Used to count the segments that
 * carried a burst's answers, the round trips they took, and TCP handshakes.
 */
import fs from 'node:fs';

export interface Frame {
  /** Wall-clock time, epoch ms. */
  readonly at: number;
  readonly dir: number;
  readonly verdict: string;
  readonly src: string;
  readonly srcPort: number;
  readonly dst: string;
  readonly dstPort: number;
  readonly flags: string;
  readonly payload: number;
}

export function readLinkLog(file: string): Frame[] {
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  let t0 = 0;
  const frames: Frame[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) {
      const m = /t0_realtime (\d+)\.(\d+)/.exec(line);
      if (m) t0 = Number(m[1]) * 1000 + Number(m[2]) / 1e6;
      continue;
    }
    const f = line.trim().split(/\s+/);
    if (f.length < 6) continue;
    const addr = /^(.+):(\d+)>(.+):(\d+)$/.exec(f[5] ?? '');
    if (!addr) continue;
    frames.push({
      at: t0 + Number(f[0]),
      dir: Number(f[1]),
      verdict: f[2] ?? '',
      src: addr[1] ?? '',
      srcPort: Number(addr[2]),
      dst: addr[3] ?? '',
      dstPort: Number(addr[4]),
      flags: f[6] ?? '',
      payload: Number(f[f.length - 1]),
    });
  }
  return frames;
}

/** Segments with data sent from `port` (server side) between `from` and `to` (epoch ms, as they entered linkemu) that it forwarded. */
export function dataFrom(frames: readonly Frame[], port: number, from: number, to: number): Frame[] {
  return frames.filter((f) => f.srcPort === port && f.at >= from && f.at <= to && f.payload > 0 && f.verdict === 'fwd');
}

/** Groups of frames separated by more than `gapMs`: the "steps" in which a burst arrived. */
export function steps(frames: readonly Frame[], gapMs: number): number {
  let n = 0;
  let last = -Infinity;
  for (const f of frames) {
    if (f.at - last > gapMs) n++;
    last = f.at;
  }
  return n;
}

/** SYNs (without ACK, which linkemu writes as '.') sent to `port` between `from` and `to`: new TCP connections toward that server port. */
export function synsTo(frames: readonly Frame[], port: number, from = -Infinity, to = Infinity): Frame[] {
  return frames.filter((f) => f.dstPort === port && f.at >= from && f.at <= to && f.flags.includes('S') && !f.flags.includes('.'));
}
