/**
 * The proxy's Node/V8 flags reach every way it is started (they only work
 * at start-up): the `dotstub` command's shebang, the packaged CLI wrapper,
 * and the flags V8 then actually runs with.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { PROXY_NODE_FLAGS } from './node-flags.js';

const root = path.resolve(import.meta.dirname, '..');

describe('the proxy process flags', () => {
  test('bin/dotstub.js starts node with them (shebang), and packaging/dotstub-cli passes them to Electron-as-Node', () => {
    const shebang = fs.readFileSync(path.join(root, 'bin', 'dotstub.js'), 'utf8').split('\n')[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${PROXY_NODE_FLAGS.join(' ')}`);
    const wrapper = fs.readFileSync(path.join(root, 'packaging', 'dotstub-cli'), 'utf8');
    expect(wrapper).toContain(`/opt/dotstub/dotstub ${PROXY_NODE_FLAGS.join(' ')} /opt/dotstub/resources/app.asar/bin/dotstub.js`);
  });

  test('with them, V8 keeps the young generation small however much is allocated', () => {
    const script = `
      const v8 = require('node:v8');
      let keep = [];
      for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 50000) keep = []; }
      const ns = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      process.stdout.write(String(ns.space_size));`;
    const withFlags = Number(execFileSync(process.execPath, [...PROXY_NODE_FLAGS, '-e', script], { encoding: 'utf8', timeout: 30_000 }));
    const without = Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 }));
    expect(withFlags).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(without).toBeGreaterThan(withFlags);
  });
});
