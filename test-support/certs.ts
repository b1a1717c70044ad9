/**
 * Test PKI made at test time with openssl: a CA, a server certificate for
 * `dns.test` (and 127.0.0.1) signed by it, and an impostor certificate for the
 * same name from a different CA (what a TLS-intercepting middlebox presents).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { removeOnExit } from './temp.js';
import os from 'node:os';
import path from 'node:path';

export interface TestPki {
  readonly dir: string;
  readonly authName: string;
  readonly caFile: string;
  readonly caPem: string;
  readonly serverKeyFile: string;
  readonly serverCertFile: string;
  readonly serverKey: string;
  readonly serverCert: string;
  /** Same name, signed by a CA nobody trusts. */
  readonly impostorKey: string;
  readonly impostorCert: string;
  /** base64 SHA-256 of the server's SubjectPublicKeyInfo. */
  readonly serverPin: string;
}

let cached: TestPki | undefined;

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): void {
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], dir);
  openssl(['req', '-x509', '-new', '-key', `${name}.key`, '-sha256', '-days', '2', '-subj', `/CN=${name} test CA`, '-out', `${name}.pem`], dir);
}

function makeLeaf(dir: string, ca: string, leaf: string, authName: string): void {
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${leaf}.key`], dir);
  openssl(['req', '-new', '-key', `${leaf}.key`, '-subj', `/CN=${authName}`, '-out', `${leaf}.csr`], dir);
  fs.writeFileSync(path.join(dir, `${leaf}.ext`), `subjectAltName=DNS:${authName},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`);
  openssl(['x509', '-req', '-in', `${leaf}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-sha256', '-extfile', `${leaf}.ext`, '-out', `${leaf}.pem`], dir);
}

/**
 * One more server certificate from the test CA, for `names` and `ips` (its
 * subjectAltName), e.g. a network's own resolver with its IP address in it
 * (RFC 9462's verified discovery). Files in the PKI's directory.
 */
export function leafFrom(pki: TestPki, leaf: string, names: readonly string[], ips: readonly string[]): { readonly keyFile: string; readonly certFile: string } {
  const dir = pki.dir;
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${leaf}.key`], dir);
  openssl(['req', '-new', '-key', `${leaf}.key`, '-subj', `/CN=${names[0] ?? ips[0] ?? leaf}`, '-out', `${leaf}.csr`], dir);
  const san = [...names.map((n) => `DNS:${n}`), ...ips.map((a) => `IP:${a}`)].join(',');
  fs.writeFileSync(path.join(dir, `${leaf}.ext`), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  openssl(['x509', '-req', '-in', `${leaf}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-sha256', '-extfile', `${leaf}.ext`, '-out', `${leaf}.pem`], dir);
  return { keyFile: path.join(dir, `${leaf}.key`), certFile: path.join(dir, `${leaf}.pem`) };
}

/** Creates (once per process) the test PKI under a temporary directory. */
export function testPki(authName = 'dns.test'): TestPki {
  if (cached && cached.authName === authName) return cached;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-pki-'));
  // One PKI per test process, removed when the process ends (the files are read by servers until then).
  removeOnExit(dir);
  makeCa(dir, 'ca');
  makeLeaf(dir, 'ca', 'server', authName);
  makeCa(dir, 'evil');
  makeLeaf(dir, 'evil', 'impostor', authName);
  const read = (f: string): string => fs.readFileSync(path.join(dir, f), 'utf8');
  const spki = crypto.createPublicKey(read('server.pem')).export({ type: 'spki', format: 'der' });
  cached = {
    dir,
    authName,
    caFile: path.join(dir, 'ca.pem'),
    caPem: read('ca.pem'),
    serverKeyFile: path.join(dir, 'server.key'),
    serverCertFile: path.join(dir, 'server.pem'),
    serverKey: read('server.key'),
    serverCert: read('server.pem'),
    impostorKey: read('impostor.key'),
    impostorCert: read('impostor.pem'),
    serverPin: crypto.createHash('sha256').update(spki).digest('base64'),
  };
  return cached;
}
