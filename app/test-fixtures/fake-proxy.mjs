// A stand-in for bin/dotstub.js in the supervisor's tests: takes the same
// --ready-file/--control flags and misbehaves on request.
//   --crash-times N --counter FILE  crash (exit 1) after ready, the first N runs
//   --exit-code N                   exit with N at once, saying why on stderr
//   --never-ready                   run without writing the ready file
//   --ignore-sigterm                only SIGKILL ends it
import fs from 'node:fs';
import { clearInterval, setInterval } from 'node:timers';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    'ready-file': { type: 'string' },
    control: { type: 'string' },
    'crash-times': { type: 'string' },
    counter: { type: 'string' },
    'exit-code': { type: 'string' },
    'never-ready': { type: 'boolean' },
    'ignore-sigterm': { type: 'boolean' },
  },
});

const keepAlive = setInterval(() => {}, 1000);
// Bounded: a fixture left behind by a broken test ends by itself.
setTimeout(() => process.exit(3), 30_000).unref();

if (values['exit-code'] !== undefined) {
  console.error('dotstub: strict mode needs a way to authenticate 10.0.0.1: add its name');
  process.exit(Number(values['exit-code']));
}
let run = 1;
if (values.counter) {
  run = (fs.existsSync(values.counter) ? Number(fs.readFileSync(values.counter, 'utf8')) : 0) + 1;
  fs.writeFileSync(values.counter, String(run));
}
if (values['ignore-sigterm']) process.on('SIGTERM', () => console.error('dotstub: ignoring SIGTERM'));
else process.on('SIGTERM', () => {
  clearInterval(keepAlive);
  if (values['ready-file']) fs.rmSync(values['ready-file'], { force: true });
  process.exit(0);
});

if (!values['never-ready']) {
  const tmp = `${values['ready-file']}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ dns: [{ host: '127.0.0.1', port: 5300 }], control: 'http://127.0.0.1:5380', token: `token-run-${run}`, pid: process.pid }));
  fs.renameSync(tmp, values['ready-file']);
  console.error(`dotstub: ready (run ${run})`);
}
if (run <= Number(values['crash-times'] ?? 0)) {
  setTimeout(() => {
    console.error(`dotstub: crashing on purpose (run ${run})`);
    process.exit(1);
  }, 100);
}
