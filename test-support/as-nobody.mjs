/**
 * Loaded into the desktop app's own proxy with NODE_OPTIONS=--import, for a
 * test that runs as root: the proxy runs as `nobody`, as a desktop user's
 * own proxy runs unprivileged, so the system-DNS takeover refuses ("needs
 * root") and this machine's DNS is never touched. Before dropping root it
 * hands the directory of its ready file (the app's supervisor made it,
 * 0700) to nobody; the test hands over the config dir. Not root: nothing.
 */
import fs from 'node:fs';
import path from 'node:path';

const NOBODY = 65534;
if (process.getuid?.() === 0) {
  const at = process.argv.indexOf('--ready-file');
  const readyFile = at > 0 ? process.argv[at + 1] : undefined;
  if (readyFile) fs.chownSync(path.dirname(readyFile), NOBODY, NOBODY);
  process.setgroups([]);
  process.setgid(NOBODY);
  process.setuid(NOBODY);
}
