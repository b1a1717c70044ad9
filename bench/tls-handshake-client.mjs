// Run by bench/tls-handshake.ts under each Node runtime (plain JavaScript, so
// any runtime runs it as it is). Makes TLS connections to one DoT server the
// way dotstub's upstream connections make them (proxy/upstream/connection/
// lifecycle.ts and tls.ts: TLS 1.2 minimum, SNI, no ALPN, the system roots
// plus the given CA, identity checked after the handshake, the last session
// offered for resumption) and prints, as JSON on stdout, each handshake's
// time from tls.connect to 'secureConnect' (TCP connect included, loopback),
// whether it resumed, and the key exchange Node reports.
//
//   node tls-handshake-client.mjs '{"host","port","servername","caFile","full":N,"resumed":N}'
import fs from 'node:fs';
import tls from 'node:tls';

const o = JSON.parse(process.argv[2]);
const secureContext = tls.createSecureContext({ ca: [...tls.rootCertificates, fs.readFileSync(o.caFile, 'utf8')], minVersion: 'TLSv1.2' });

/** One connection: the handshake's time and what it agreed; resolves once the server's session ticket is in (or 500 ms). */
function handshake(session) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let result;
    let ticket;
    const s = tls.connect({ host: o.host, port: o.port, servername: o.servername, minVersion: 'TLSv1.2', secureContext, rejectUnauthorized: false, session });
    s.setNoDelay(true);
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve({ ...result, session: ticket });
    };
    const timer = setTimeout(() => (result ? done() : (s.destroy(), reject(new Error('handshake timed out')))), 5000);
    s.once('secureConnect', () => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (!s.authorized) {
        s.destroy();
        reject(new Error(`not authorized: ${s.authorizationError}`));
        return;
      }
      result = { ms, resumed: s.isSessionReused(), protocol: s.getProtocol(), key: s.getEphemeralKeyInfo() };
      if (ticket) done();
      else setTimeout(() => done(), 500);
    });
    s.on('session', (t) => {
      ticket = t;
      if (result) done();
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

const full = [];
for (let i = 0; i < o.full; i++) full.push(await handshake(undefined));
const resumed = [];
let session = full.at(-1)?.session ?? (await handshake(undefined)).session;
for (let i = 0; i < o.resumed; i++) {
  const r = await handshake(session);
  resumed.push(r);
  session = r.session ?? session;
}
const strip = (r) => ({ ms: r.ms, resumed: r.resumed, protocol: r.protocol, key: r.key });
process.stdout.write(
  JSON.stringify({
    node: process.version,
    openssl: process.versions.openssl,
    defaultEcdhCurve: tls.DEFAULT_ECDH_CURVE,
    full: full.map(strip),
    resumed: resumed.map(strip),
  }),
);
