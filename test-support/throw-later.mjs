// Loaded with `node --import` into a dotstub under test: once the file named
// by DOTSTUB_LAB_THROW_WHEN exists, throws inside a timer callback, where
// nothing in dotstub catches it — the shape of issue 41's crash (a check's
// socket callback throwing), without a hook in the product. The fail-safe
// stop (proxy/cli.ts) is what the test watches.
import fs from 'node:fs';
import { clearInterval, setInterval, setTimeout } from 'node:timers';

const trigger = process.env.DOTSTUB_LAB_THROW_WHEN;
if (trigger) {
  const poll = setInterval(() => {
    if (!fs.existsSync(trigger)) return;
    clearInterval(poll);
    fs.rmSync(trigger, { force: true });
    setTimeout(() => {
      const err = new Error('injected by the test: a check threw inside its socket callback');
      err.code = 'EINJECTED';
      throw err;
    }, 0);
  }, 20);
  poll.unref();
}
