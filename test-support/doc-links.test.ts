/**
 * Every relative link in the README and in docs/ leads somewhere: the file
 * it names exists, and a `#fragment` names a heading of that page (as
 * GitHub makes its anchors). The README is short and sends readers to
 * docs/ for each subject, so a page renamed or a heading reworded must not
 * leave a dead link behind. Links with a scheme (https:, file:) are not
 * followed; code spans and fenced blocks are not links.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The pages checked: the README and every page in docs/. */
const PAGES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The text outside fenced blocks and code spans (a `[x](y)` there is code, not a link). */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; a repeat gets -1, -2, … */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = (m[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Each relative link in `file` (path from `root`) that leads nowhere, as "file: [text](target): why". */
function brokenLinks(root: string, file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const body = prose(text);
  const targets = [
    ...[...body.matchAll(/\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({ label: m[1] as string, target: m[2] as string })),
    ...[...body.matchAll(/^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => ({ label: m[1] as string, target: m[2] as string })),
  ];
  const broken: string[] = [];
  for (const { label, target } of targets) {
    if (/^[a-z][a-z\d+.-]*:/i.test(target)) continue;
    const hash = target.indexOf('#');
    const linked = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const fragment = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const where = linked === '' ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), linked);
    const say = (why: string): number => broken.push(`${file}: [${label}](${target}): ${why}`);
    if (!where.startsWith(root + path.sep)) say('leads outside the project');
    else if (!fs.existsSync(where)) say(`${path.relative(root, where)} does not exist`);
    else if (fragment !== undefined && where.endsWith('.md') && !anchors(fs.readFileSync(where, 'utf8')).has(fragment)) {
      say(`${path.relative(root, where)} has no heading with the anchor #${fragment}`);
    }
  }
  return broken;
}

describe('links in the README and docs/', () => {
  test.each(PAGES)('every relative link in %s leads to a file and heading that exist', (file) => {
    expect(brokenLinks(ROOT, file)).toEqual([]);
  });

  test('the check catches a missing page, a missing heading and a link outside the project, and ignores code', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-doc-links-'));
    try {
      fs.mkdirSync(path.join(root, 'docs'));
      fs.writeFileSync(path.join(root, 'docs/a.md'), '# A page\n\n## Who may control it?\n\n## Who may control it?\n');
      fs.writeFileSync(
        path.join(root, 'README.md'),
        [
          '# Read me',
          '[fine](docs/a.md), [heading](docs/a.md#who-may-control-it), [repeat](docs/a.md#who-may-control-it-1), [here](#read-me), [web](https://example.com/x.md)',
          '[gone](docs/b.md), [no heading](docs/a.md#who-controls-it), [out](../elsewhere.md)',
          '[defined]: docs/c.md',
          '`[code](docs/d.md)`',
          '```',
          '[fenced](docs/e.md)',
          '```',
        ].join('\n'),
      );
      expect(brokenLinks(root, 'README.md')).toEqual([
        'README.md: [gone](docs/b.md): docs/b.md does not exist',
        'README.md: [no heading](docs/a.md#who-controls-it): docs/a.md has no heading with the anchor #who-controls-it',
        'README.md: [out](../elsewhere.md): leads outside the project',
        'README.md: [defined](docs/c.md): docs/c.md does not exist',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
