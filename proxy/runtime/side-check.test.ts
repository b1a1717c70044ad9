/**
 * A check beside the query path fails however its I/O fails, and the process
 * lives on (side-check.ts; issue 41). Exceptions that escape a callback reach
 * only the process's last-resort handlers, which vitest owns in its workers:
 * so each case runs in a child Node process with the handlers cli.ts installs
 * (a check's exception fails the check; any other is the fail-safe stop).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';

function runChild(body: string): { readonly lines: string[]; readonly status: number | null; readonly stderr: string } {
  const script = `
    import dgram from 'node:dgram';
    import { EventEmitter } from 'node:events';
    import { sideCheck, failSideCheck } from './proxy/runtime/side-check.ts';
    const out = (...a) => console.log(JSON.stringify(a));
    const onEscaped = (err) => {
      const check = failSideCheck(err);
      if (check === null) { out('fail-safe stop', String(err?.message ?? err)); process.exit(70); }
      out('escaped from', check);
    };
    process.on('uncaughtException', onEscaped);
    process.on('unhandledRejection', onEscaped);
    ${body}
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { lines: r.stdout.trim().split('\n').filter(Boolean), status: r.status, stderr: r.stderr };
}

describe('sideCheck', () => {
  test('a throw, a rejection, a throw inside a socket callback and an error event nobody listens for each fail their check, in words; the process goes on', () => {
    const r = runChild(`
      const injected = (what) => Object.assign(new Error('injected: ' + what), { code: 'EINJECTED' });
      const results = await Promise.all([
        sideCheck('sync', () => { throw injected('a throw'); }),
        sideCheck('rejects', () => Promise.reject(injected('a rejection'))),
        sideCheck('socket callback', () => new Promise(() => {
          const s = dgram.createSocket('udp4');
          s.connect(9, '127.0.0.1', () => { s.close(); throw injected('inside the connect callback'); });
        })),
        sideCheck('error event', () => new Promise(() => {
          const e = new EventEmitter();
          setTimeout(() => e.emit('error', injected('an error event')), 10);
        })),
        sideCheck('fine', async () => 42),
      ]);
      for (const o of results) out(o);
      await new Promise((r) => setTimeout(r, 50));
      out('still running');
    `);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.lines.map((l) => JSON.parse(l) as unknown[])).toEqual([
      ['escaped from', 'socket callback'],
      ['escaped from', 'error event'],
      [{ ok: false, why: expect.stringMatching(/^injected: a throw \(EINJECTED\)$/) as unknown }],
      [{ ok: false, why: expect.stringMatching(/^injected: a rejection \(EINJECTED\)$/) as unknown }],
      [{ ok: false, why: expect.stringMatching(/^injected: inside the connect callback \(EINJECTED\)$/) as unknown }],
      [{ ok: false, why: expect.stringMatching(/^injected: an error event \(EINJECTED\)$/) as unknown }],
      [{ ok: true, value: 42 }],
      ['still running'],
    ]);
  });

  test("what a check's outcome starts belongs to no check: an exception there is the fail-safe stop's, as is one from the query path", () => {
    const r = runChild(`
      const o = await sideCheck('a check', async () => 'measured');
      out(o);
      // Done with the outcome: e.g. a switch of resolver whose connection later throws in a callback.
      setTimeout(() => { throw new Error('from the query path'); }, 10);
    `);
    expect(r.lines.map((l) => JSON.parse(l) as unknown[])).toEqual([[{ ok: true, value: 'measured' }], ['fail-safe stop', 'from the query path']]);
    expect(r.status).toBe(70);
  });

});
