/**
 * Serves the built dashboard (renderer/dist) as a single-page app: files by
 * path, unknown paths without an extension → index.html, missing assets →
 * 404 (so a stale page never gets HTML for its script). The page and its
 * assets hold no data, so they load without the token.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerResponse } from 'node:http';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/**
 * Strict CSP for every HTML page: scripts, styles and fetches only from this
 * origin, no inline script, no framing, no plugins, forms only to itself.
 */
const HTML_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** The package root: the nearest directory above this module with package.json (works from proxy/ and dist/proxy/). */
function packageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return from;
    dir = up;
  }
}

export function defaultDashboardDir(): string {
  return path.join(packageRoot(), 'renderer', 'dist');
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dotstub</title></head>
<body><h1>dotstub is running</h1>
<p>The dashboard is not built yet. Run <code>npm run build</code> in the dotstub directory, then reload this page.</p>
<p>The API works meanwhile: <code>curl -H "Authorization: Bearer $(cat ~/.config/dotstub/token)" http://HOST/api/status</code></p>
</body></html>
`;

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': HTML_CSP,
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(html),
  });
  res.end(html);
}

export class StaticFiles {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  get built(): boolean {
    return fs.existsSync(path.join(this.root, 'index.html'));
  }

  /** Serves the raw (still URL-encoded) request path, for GET and HEAD. */
  serve(rawPath: string, head: boolean, res: ServerResponse, host: string): void {
    if (!this.built) {
      sendHtml(res, 200, NOT_BUILT.replace('HOST', host));
      return;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' }).end('bad path\n');
      return;
    }
    if (decoded.includes('\0')) {
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' }).end('bad path\n');
      return;
    }
    const file = path.resolve(this.root, '.' + path.posix.normalize('/' + decoded));
    // Invariant: never serve outside root (normalize already strips ../, this is the backstop).
    const inside = file === this.root || file.startsWith(this.root + path.sep);
    let target = inside ? file : undefined;
    if (target) {
      try {
        if (!fs.statSync(target).isFile()) target = undefined;
      } catch {
        target = undefined;
      }
    }
    if (!target) {
      if (path.posix.extname(decoded) !== '') {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      target = path.join(this.root, 'index.html');
    }
    const ext = path.extname(target).toLowerCase();
    const type = TYPES[ext] ?? 'application/octet-stream';
    const headers: Record<string, string | number> = { 'Content-Type': type, 'Content-Length': fs.statSync(target).size };
    if (ext === '.html') {
      headers['Content-Security-Policy'] = HTML_CSP;
      headers['Cache-Control'] = 'no-cache';
    } else if (decoded.startsWith('/assets/')) {
      // Vite puts a content hash in asset names.
      headers['Cache-Control'] = 'public, max-age=31536000, immutable';
    } else {
      headers['Cache-Control'] = 'no-cache';
    }
    res.writeHead(200, headers);
    if (head) {
      res.end();
      return;
    }
    fs.createReadStream(target)
      .on('error', () => res.destroy())
      .pipe(res);
  }
}
