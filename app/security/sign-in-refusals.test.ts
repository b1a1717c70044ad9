import { describe, expect, it } from 'vitest';
import { downloadRefusal, pageRefusal, permissionRefusal, RefusalNotices } from './sign-in-refusals.js';

describe("the sign-in window's refusals, in words", () => {
  it('names each permission a page may ask for, and an unknown one by its name', () => {
    expect(permissionRefusal('media')).toBe("The sign-in page asked to use your camera or microphone: refused. A Wi-Fi sign-in page needs none of this computer's devices or data.");
    expect(permissionRefusal('geolocation')).toContain('asked to know your location: refused');
    expect(permissionRefusal('notifications')).toContain('asked to show notifications: refused');
    expect(permissionRefusal('clipboard-read')).toContain('to read your clipboard');
    expect(permissionRefusal('clipboard-sanitized-write')).toContain('to write to your clipboard');
    expect(permissionRefusal('speaker-selection')).toContain('asked for the "speaker-selection" permission: refused');
  });

  it("names a download's file, cut short and without control characters, and says nothing was saved", () => {
    expect(downloadRefusal('wifi-terms.pdf')).toBe('The sign-in page tried to download wifi-terms.pdf: refused, nothing was saved. A Wi-Fi sign-in needs no file; if you want it, download it in your browser once you are signed in.');
    expect(downloadRefusal('')).toContain('tried to download a file: refused');
    const long = downloadRefusal(`${'a'.repeat(200)}\u001b[2J.exe`);
    expect(long).not.toContain('\u001b');
    expect(long).toContain(`${'a'.repeat(79)}…`);
  });

  it("refuses what isn't a web page of the network, saying why and never the address", () => {
    expect(pageRefusal('http://login.hotspot.test/', 'open')).toBeNull();
    expect(pageRefusal('https://pay.example/', 'redirect')).toBeNull();
    expect(pageRefusal('file:///home/user/.ssh/id_ed25519', 'open')).toBe('The network’s sign-in address was not opened: a file: address is not a web page of the network. The sign-in window shows the network’s web pages only.');
    const local = pageRefusal('http://127.0.0.1:5380/#token=abc', 'navigate');
    expect(local).toBe('The sign-in page tried to go to a page that was refused: 127.0.0.1 is this machine (loopback). The sign-in window shows the network’s web pages only.');
    expect(pageRefusal('data:text/html,hi', 'new-window')).toContain('tried to open a window that was refused: a data: address');
  });

  it('says each refusal once until reset', () => {
    const n = new RefusalNotices();
    expect([n.say('a'), n.say('a'), n.say('b')]).toEqual([true, false, true]);
    n.reset();
    expect(n.say('a')).toBe(true);
  });
});
