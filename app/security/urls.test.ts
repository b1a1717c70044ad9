import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../proxy/config/resolvers.js';
import { isAllowedExternal, isAllowedNavigation, isTrustedSender, originOf, whyNotSignInPage } from './urls.js';

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

describe('whyNotSignInPage', () => {
  it("lets the sign-in window browse the network's pages, any host, and never this machine's or a file", () => {
    for (const ok of ['http://192.0.2.1/', 'http://login.hotspot.test/login', 'https://pay.hotspot.example/card?x=1', 'http://10.53.1.1:8080/', 'https://[2001:db8::1]/']) expect(whyNotSignInPage(ok), ok).toBeNull();
    for (const no of [
      'http://127.0.0.1:45955/#token=abc',
      'http://127.9.9.9/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://localhost:8080/',
      'http://printer.localhost/',
      'http://[::1]:631/',
      'http://[::ffff:127.0.0.1]/',
      'http://0.0.0.0:5380/',
      'http://[::]:5380/',
      'http://169.254.169.254/latest/meta-data/',
      'http://169.254.1.1/',
      'http://[fe80::1]/',
      'http://224.0.0.251/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,hi',
      'chrome://settings',
      'smb://host/share',
      'not a url',
    ]) {
      expect(whyNotSignInPage(no), no).not.toBeNull();
    }
    // In words, without repeating the address (the dashboard's link holds a token).
    expect(whyNotSignInPage('http://127.0.0.1:45955/#token=abc')).toBe('127.0.0.1 is this machine (loopback)');
    expect(whyNotSignInPage('file:///home/user/.ssh/id_ed25519')).toBe('a file: address is not a web page of the network');
    expect(whyNotSignInPage('http://169.254.169.254/')).toContain('the cloud metadata service');
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
