// Loaded with `node --import` into a dotstub under test (the network-shapes
// lab): breaks the I/O of the checks that stand beside the query path,
// inside their own callbacks, where nothing of theirs catches it — the shape
// of issue 41's crash — without a hook in the product. DOTSTUB_LAB_BREAK
// names what breaks, comma-separated:
//   dgram  a UDP socket connected to port 53 (the interception check, DDR's
//          question, the NAT64 search) throws inside its connect callback
//   http   an HTTP request (the portal check's probes) throws inside its
//          'socket' callback
// The proxy's own sockets never connect (its listeners bind), its upstream
// speaks TLS: neither is touched.
import dgram from 'node:dgram';
import http from 'node:http';

const breaks = new Set((process.env.DOTSTUB_LAB_BREAK ?? '').split(',').filter(Boolean));
const injected = (what) => Object.assign(new Error(`injected by the test: ${what}`), { code: 'EINJECTED' });

if (breaks.has('dgram')) {
  const connect = dgram.Socket.prototype.connect;
  dgram.Socket.prototype.connect = function (port, address, cb) {
    if (port !== 53 || typeof cb !== 'function') return connect.call(this, port, address, cb);
    return connect.call(this, port, address, (...args) => {
      cb(...args);
      throw injected('a throw inside a check’s UDP connect callback');
    });
  };
}

if (breaks.has('http')) {
  const request = http.request;
  http.request = function (...args) {
    const req = request.apply(this, args);
    req.once('socket', () => {
      throw injected('a throw inside a check’s HTTP socket callback');
    });
    return req;
  };
}
