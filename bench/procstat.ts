/**
 * CPU time and memory of a process from /proc (Linux only).
 *
 * CPU is utime+stime of the whole process (all its threads), in seconds;
 * memory is VmRSS (now) and VmHWM (peak resident set) from /proc/PID/status.
 * `childrenCpu()` reads our own cutime+cstime: the CPU of children we have
 * already reaped, which is how dnsperf's own cost is measured after it exits.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let clockTicks: number | undefined;

/** sysconf(_SC_CLK_TCK): the unit of the times in /proc/PID/stat. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    let n = Number.NaN;
    try {
      n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      // getconf missing: Linux has used 100 on every mainstream architecture for decades.
    }
    clockTicks = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

/** Fields of /proc/PID/stat after the `(comm)` field, which may itself hold spaces and parentheses. */
function statFields(pid: number | 'self'): string[] {
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).trim().split(' ');
}

/** Field N of proc(5) (1-based, as the man page numbers them), from the fields after comm. */
function field(fields: readonly string[], n: number): number {
  // Fields 1 (pid) and 2 (comm) precede the slice, so field n is at index n - 3.
  return Number(fields[n - 3] ?? Number.NaN);
}

/** User + system CPU seconds the process has used so far (all threads). */
export function processCpu(pid: number): number {
  const f = statFields(pid);
  return (field(f, 14) + field(f, 15)) / ticksPerSecond();
}

/** CPU seconds of this process's children that have exited and been waited for. */
export function childrenCpu(): number {
  const f = statFields('self');
  return (field(f, 16) + field(f, 17)) / ticksPerSecond();
}

export interface Memory {
  /** Resident set now, bytes. */
  readonly rss: number;
  /** Peak resident set (high-water mark), bytes. */
  readonly hwm: number;
  /**
   * The resident memory only this process holds (RssAnon: heap, stacks,
   * malloc), bytes. The rest of RSS is file pages (RssFile: the program's
   * binary and libraries), which the kernel shares and can drop, and whose
   * count depends on how the page cache holds the file: the same Node 24
   * binary measured 40 MiB of file pages freshly copied and 66 MiB once
   * read back through readahead's large folios (kernel 6.18), anon equal.
   */
  readonly anon: number;
  readonly file: number;
}

export function processMemory(pid: number): Memory {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : Number.NaN;
  };
  return { rss: kib('VmRSS'), hwm: kib('VmHWM'), anon: kib('RssAnon'), file: kib('RssFile') };
}

/** Busy and total jiffies of the whole machine (first line of /proc/stat), to tell how saturated the cores were. */
export function machineCpu(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: (total - idle) / ticksPerSecond(), total: total / ticksPerSecond() };
}
