/**
 * The network lab itself: a client reaches unbound in the server namespace
 * through the router over IPv4 and IPv6 (DoT and DoH), a router rule cuts
 * that path and its removal restores it, the capture sees cleartext DNS that
 * left the client with its name, and closing the lab leaves no process.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { netlabMissing, startNetlab, unboundIn, type Netlab } from './netlab.js';
import { startUnbound, type UnboundServer } from './unbound.js';
import { skipWith } from './skips.js';

const missing = netlabMissing();

let lab: Netlab;
let unbound: UnboundServer;

beforeAll(async () => {
  if (missing) return;
  lab = await startNetlab();
  unbound = await startUnbound({ names: 5, port: 853, dohPort: 443, launch: unboundIn(lab.server, [lab.addresses.server4, lab.addresses.server6]) });
});
afterAll(async () => {
  await unbound?.stop();
  await lab?.close();
});

function kdigTls(server: string, name: string, extra: readonly string[] = []): string[] {
  return ['kdig', `@${server}`, '-p', '853', '+tls', `+tls-ca=${unbound.pki.caFile}`, '+tls-hostname=dns.test', '+time=1', '+retry=0', '+short', ...extra, name, 'A'];
}

test('client reaches DoT over IPv4 and IPv6, and DoH, through the router', skipWith(missing), async () => {
  const v4 = await lab.client.exec(kdigTls(lab.addresses.server4, 'n1.test'));
  expect(v4.stdout.trim()).toBe('192.0.2.2');
  const v6 = await lab.client.exec(kdigTls(lab.addresses.server6, 'n2.test'));
  expect(v6.stdout.trim()).toBe('192.0.2.3');
  const doh = await lab.client.exec(['kdig', `@${lab.addresses.server4}`, '-p', '443', '+https', `+tls-ca=${unbound.pki.caFile}`, '+tls-hostname=dns.test', '+short', 'n3.test', 'A']);
  expect(doh.stdout.trim()).toBe('192.0.2.4');
});

test('a router rule cuts 853 and its removal restores it', skipWith(missing), async () => {
  const remove = await lab.iptables(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'REJECT', '--reject-with', 'tcp-reset'], 'both');
  const cut = await lab.client.exec(kdigTls(lab.addresses.server4, 'n1.test'));
  expect(cut.stdout.trim()).toBe('');
  expect(cut.stdout + cut.stderr).toMatch(/refused|reset|failed/i);
  await remove();
  const back = await lab.client.exec(kdigTls(lab.addresses.server4, 'n1.test'));
  expect(back.stdout.trim()).toBe('192.0.2.2');
});

test('the capture reports cleartext DNS leaving the client, with its name; DoT is not counted', skipWith(missing), async () => {
  const cap = await lab.capture();
  await lab.client.exec(kdigTls(lab.addresses.server4, 'private.test'));
  await lab.client.exec(['dig', `@${lab.addresses.server4}`, '-p', '53', '+time=1', '+tries=1', 'leaked.test', 'A']);
  await lab.client.exec(['dig', `@${lab.addresses.server6}`, '-p', '53', '+tcp', '+time=1', '+tries=1', 'leaked-tcp.test', 'A']);
  const packets = await cap.stop();
  const udp = packets.filter((p) => p.proto === 'udp');
  expect(udp.map((p) => [p.dst, p.dstPort, p.qname])).toEqual([[lab.addresses.server4, 53, 'leaked.test']]);
  // TCP to a closed port 53: the SYN left (no name in it), refused at once.
  expect(packets.some((p) => p.proto === 'tcp' && p.dst === lab.addresses.server6 && p.dstPort === 53)).toBe(true);
  expect(packets.every((p) => p.qname !== 'private.test')).toBe(true);
});

test('closing the lab ends every process in it', skipWith(missing), async () => {
  const other = await startNetlab();
  const sleeper = other.server.spawn(['sleep', '300']);
  await new Promise((r) => setTimeout(r, 200));
  const nsenterPid = sleeper.child.pid as number;
  const inner = Number(fs.readFileSync(`/proc/${nsenterPid}/task/${nsenterPid}/children`, 'utf8').trim());
  expect(inner).toBeGreaterThan(0);
  await other.close();
  await sleeper.exited;
  expect(fs.existsSync(`/proc/${inner}`)).toBe(false);
  expect(fs.existsSync(other.dir)).toBe(false);
});

test('a test process killed with SIGKILL leaves no lab behind', skipWith(missing), async () => {
  // A child test process starts a lab with a long-running program in it, prints that program's host PID, and is killed.
  const script = `
    import fs from 'node:fs';
    const { startNetlab } = await import('./test-support/netlab.ts');
    const lab = await startNetlab();
    const p = lab.server.spawn(['sleep', '300']);
    for (;;) {
      const kids = fs.readFileSync('/proc/' + p.child.pid + '/task/' + p.child.pid + '/children', 'utf8').trim();
      if (kids) { console.log('INNER ' + kids + ' DIR ' + lab.dir); break; }
      await new Promise((r) => setTimeout(r, 20));
    }
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: path.resolve(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  const deadline = Date.now() + 20_000;
  while (!/INNER \d+ DIR \S+/.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  const m = /INNER (\d+) DIR (\S+)/.exec(out);
  child.kill('SIGKILL');
  await exited;
  expect(m, `the child printed no lab: ${out}`).not.toBeNull();
  const inner = Number(m?.[1]);
  const gone = Date.now() + 5000;
  while (fs.existsSync(`/proc/${inner}`) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
  expect(fs.existsSync(`/proc/${inner}`)).toBe(false);
  // Its directory outlives a SIGKILL; the next lab removes it.
  await (await startNetlab()).close();
  expect(fs.existsSync(m?.[2] ?? '/')).toBe(false);
});

test("the lab's own resolv.conf: glibc in the client asks the server it names (the host's file untouched)", skipWith(missing), async () => {
  const before = fs.readFileSync('/etc/resolv.conf', 'utf8');
  const other = await startNetlab({ resolvConf: 'nameserver 10.53.2.3\noptions timeout:1 attempts:1\n' });
  try {
    const cap = await other.capture();
    await other.client.exec(['getent', 'ahosts', 'portal-check.test']);
    const packets = await cap.stop();
    expect(packets.some((p) => p.dst === '10.53.2.3' && p.dstPort === 53 && p.qname === 'portal-check.test')).toBe(true);
  } finally {
    await other.close();
  }
  expect(fs.readFileSync('/etc/resolv.conf', 'utf8')).toBe(before);
});
