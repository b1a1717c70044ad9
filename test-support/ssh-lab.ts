/**
 * OpenSSH in a system-DNS lab (system-dns-lab.ts), for the SSHFP test
 * (proxy/system-dns/sshfp-lab.test.ts): Debian's sshd unpacked, never
 * installed (its scripts would add a user and start a daemon on this
 * machine; `.ci/run` unpacks it), run as nobody inside the lab's network
 * namespace with its own configuration, the way OpenSSH's own regression
 * tests run it; a host key made by ssh-keygen and its SSHFP records
 * (`ssh-keygen -r`); and the client's verdict on that key when it is told
 * to trust DNS (`VerifyHostKeyDNS=yes`) and nothing else.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Lab, LabProcess } from './system-dns-lab.js';

/** Where the extracted openssh-server .deb lives (dpkg-deb -x). */
const SSH_ROOT = process.env.DOTSTUB_LAB_SSH_ROOT ?? '/var/cache/dotstub-lab/ssh/root';
const SSHD = path.join(SSH_ROOT, 'usr/sbin/sshd');
/** nobody: sshd and ssh run unprivileged in the lab (no privilege separation user, no /run/sshd, no PAM). */
const NOBODY = '65534';

/** Why the SSHFP lab can't run here, or null when it can. */
export function sshLabMissing(): string | null {
  for (const bin of ['/usr/bin/ssh', '/usr/bin/ssh-keygen']) if (!fs.existsSync(bin)) return `${bin} is missing (Debian package openssh-client; .ci/run installs it)`;
  if (!fs.existsSync(SSHD)) {
    return `no sshd at ${SSHD}: run "mkdir -p ${path.dirname(SSH_ROOT)} && cd ${path.dirname(SSH_ROOT)} && apt-get download openssh-server && dpkg-deb -x openssh-server_*.deb ${path.basename(SSH_ROOT)} && apt-get install --no-install-recommends libwrap0" (set DOTSTUB_LAB_SSH_ROOT to use another place)`;
  }
  const ldd = execFileSync('ldd', [SSHD], { encoding: 'utf8' });
  const libs = [...ldd.matchAll(/^\s*(\S+) => not found/gm)].map((m) => m[1]);
  if (libs.length > 0) return `the unpacked sshd needs ${libs.join(', ')}: apt-get install --no-install-recommends libwrap0`;
  return null;
}

export interface HostKey {
  /** The private key file (host side). */
  readonly file: string;
  /** Its SSHFP records for `host` (zone-file lines, name relative): SHA-1 and SHA-256 of the ED25519 key. */
  readonly sshfp: readonly string[];
  /** The fingerprints in those records, hex, in the same order. */
  readonly digests: readonly string[];
}

/** An ED25519 host key made by ssh-keygen in `dir` under `name`, with its SSHFP records for `host`. */
export function makeHostKey(dir: string, name: string, host: string): HostKey {
  const file = path.join(dir, name);
  execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  const sshfp = execFileSync('/usr/bin/ssh-keygen', ['-r', host, '-f', `${file}.pub`], { encoding: 'utf8' }).trim().split('\n');
  const digests = sshfp.map((l) => /\sSSHFP\s+\d+\s+\d+\s+([0-9a-f]+)$/.exec(l)?.[1] ?? '');
  if (sshfp.length !== 2 || digests.some((d) => d === '')) throw new Error(`ssh-keygen -r gave no SSHFP records: ${sshfp.join(' | ')}`);
  return { file, sshfp, digests };
}

/**
 * Starts the unpacked sshd as nobody inside `lab`, listening on
 * `address`:`port` with `key` as its only host key (copied into the lab's
 * /run, which goes with the lab). Resolves once it listens.
 */
export async function startSshd(lab: Lab, key: HostKey, address: string, port: number): Promise<LabProcess> {
  const config = [
    `ListenAddress ${address}`,
    `Port ${port}`,
    'HostKey /run/ssh-lab/host_key',
    'PidFile none',
    'UsePAM no',
    'StrictModes no',
    // Nobody logs in: the verdict on the host key comes before authentication.
    'AuthorizedKeysFile none',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'LogLevel VERBOSE',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(lab.dir, 'sshd_config'), config);
  const r = await lab.exec([
    'sh',
    '-c',
    `set -e; install -d -o ${NOBODY} -g ${NOBODY} -m 0700 /run/ssh-lab; install -o ${NOBODY} -g ${NOBODY} -m 0600 ${key.file} /run/ssh-lab/host_key; install -o ${NOBODY} -g ${NOBODY} -m 0600 ${lab.dir}/sshd_config /run/ssh-lab/sshd_config`,
  ]);
  if (r.code !== 0) throw new Error(`sshd's files in the lab: ${r.stderr}`);
  // An absolute path: sshd re-executes itself for each connection.
  const sshd = lab.spawn(['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', SSHD, '-D', '-e', '-f', '/run/ssh-lab/sshd_config']);
  await sshd.waitFor(`Server listening on ${address} port ${port}`, 10_000);
  return sshd;
}

export interface SshVerdict {
  /** 'trusted': ssh took the host key from DNS and went on to authenticate; 'refused': host key verification failed. */
  readonly verdict: 'trusted' | 'refused' | 'other';
  /** What ssh said about DNS and the host key: its -v lines about them, and its last words, one a line. */
  readonly said: string;
  readonly output: string;
}

/**
 * `ssh -o VerifyHostKeyDNS=yes … host true` as nobody inside `lab`, with no
 * known hosts and no configuration file: DNS (through the lab's
 * /etc/resolv.conf) is its only way to trust the host key.
 */
export async function sshVerdict(lab: Lab, host: string, port: number): Promise<SshVerdict> {
  const r = await lab.exec(
    [
      'setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups',
      '/usr/bin/ssh', '-F', 'none', '-v', '-p', String(port),
      '-o', 'VerifyHostKeyDNS=yes', '-o', 'StrictHostKeyChecking=yes',
      '-o', 'UserKnownHostsFile=/dev/null', '-o', 'GlobalKnownHostsFile=/dev/null',
      '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5',
      host, 'true',
    ],
    { timeoutMs: 20_000 },
  );
  const output = r.stdout + r.stderr;
  const said = output
    .split('\n')
    .filter((l) => /DNS|fingerprint|SSHFP|[Hh]ost key verification|Permission denied|No [A-Z0-9]+ host key is known|Could not resolve/.test(l))
    .map((l) => l.replace(/^debug1: /, '').trim())
    .join('\n');
  const verdict = /Permission denied/.test(output) && !/Host key verification failed/.test(output) ? 'trusted' : /Host key verification failed/.test(output) ? 'refused' : 'other';
  return { verdict, said, output };
}
