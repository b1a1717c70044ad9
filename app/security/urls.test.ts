import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../proxy/config/resolvers.js';
import { isAllowedExternal, isAllowedNavigation, isTrustedSender, originOf } from './urls.js';

const control = 'http://127.0.0.1:45955';

describe('navigation and sender checks', () => {
  it('allows the dashboard origin only', () => {
    expect(isAllowedNavigation('http://127.0.0.1:45955/', control)).toBe(true);
    expect(isAllowedNavigation('http://127.0.0.1:45955/#token=abc', control)).toBe(true);
    expect(isAllowedNavigation('http://127.0.0.1:45956/', control)).toBe(false); // another loopback port is another origin
    expect(isAllowedNavigation('http://localhost:45955/', control)).toBe(false);
    expect(isAllowedNavigation('https://127.0.0.1:45955/', control)).toBe(false);
    expect(isAllowedNavigation('http://127.0.0.1:45955@evil.example/', control)).toBe(false);
    expect(isAllowedNavigation('file:///etc/passwd', control)).toBe(false);
    expect(isAllowedNavigation('javascript:alert(1)', control)).toBe(false);
    expect(isAllowedNavigation('http://127.0.0.1:45955/', undefined)).toBe(false);
  });

  it('trusts IPC only from the dashboard frame', () => {
    expect(isTrustedSender('http://127.0.0.1:45955/#/log', control)).toBe(true);
    expect(isTrustedSender('http://evil.example/', control)).toBe(false);
    expect(isTrustedSender('about:blank', control)).toBe(false);
    expect(isTrustedSender(undefined, control)).toBe(false);
    expect(isTrustedSender('http://127.0.0.1:45955/', undefined)).toBe(false);
    expect(originOf('data:text/html,hi')).toBeUndefined();
  });
});

describe('isAllowedExternal', () => {
  it('opens only https links to listed hosts', () => {
    expect(isAllowedExternal('https://www.rfc-editor.org/rfc/rfc7858')).toBe(true);
    expect(isAllowedExternal('https://github.com/dotstub/dotstub/issues')).toBe(true);
    expect(isAllowedExternal('http://www.rfc-editor.org/rfc/rfc7858')).toBe(false);
    expect(isAllowedExternal('https://evil.github.com/')).toBe(false);
    expect(isAllowedExternal('https://github.com.evil.example/')).toBe(false);
    expect(isAllowedExternal('https://user@github.com/')).toBe(false);
    expect(isAllowedExternal('https://github.com:8443/')).toBe(false);
    expect(isAllowedExternal('file:///etc/passwd')).toBe(false);
    expect(isAllowedExternal('smb://host/share')).toBe(false);
    expect(isAllowedExternal('not a url')).toBe(false);
  });

  it("opens each preset operator's own documentation page, and no retired operator's", () => {
    for (const p of Object.values(PRESETS)) {
      const docs = (p as { operator?: { docs: string } }).operator?.docs ?? `(${p.id} names no page)`;
      expect(isAllowedExternal(docs), docs).toBe(true);
    }
    expect(isAllowedExternal('https://mullvad.net/en/help/dns-over-https-and-dns-over-tls')).toBe(false);
  });
});
