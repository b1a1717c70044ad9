/**
 * What the "Sign in to network" window refuses, and the words that say so
 * (pure, so they are tested without Electron; windows/sign-in-window.ts and
 * navigation-guards.ts are the adapters). The window shows a page the
 * network chose: it gets no permission (camera, microphone, location,
 * notifications, clipboard, devices), saves no download, and shows nothing
 * but the network's web pages. Each refusal is said once per window, so a
 * page that asks in a loop doesn't flood the desktop with notifications.
 */
import { whyNotSignInPage } from './urls.js';

/** Electron's permission names, in words that follow "asked". */
const PERMISSION_WORDS: Readonly<Record<string, string>> = {
  media: 'to use your camera or microphone',
  geolocation: 'to know your location',
  notifications: 'to show notifications',
  'clipboard-read': 'to read your clipboard',
  'clipboard-sanitized-write': 'to write to your clipboard',
  midi: 'to use MIDI devices',
  midiSysex: 'to use MIDI devices',
  hid: 'to use USB (HID) devices',
  serial: 'to use serial ports',
  usb: 'to use USB devices',
  'display-capture': 'to capture your screen',
  openExternal: 'to open another application',
  fullscreen: 'to fill the screen',
  pointerLock: 'to lock the mouse pointer',
  keyboardLock: 'to lock the keyboard',
  'idle-detection': 'to know when you are away',
  'window-management': 'to place windows on your screens',
  'storage-access': 'to use storage shared with other sites',
  'top-level-storage-access': 'to use storage shared with other sites',
  fileSystem: 'to use your files',
};

const LIMIT = 80;

/** A name the network chose, shortened and stripped of control characters before it is shown. */
function shown(text: string): string {
  const clean = [...text].filter((c) => c >= ' ' && c !== '\u007f').join('');
  return clean.length > LIMIT ? `${clean.slice(0, LIMIT - 1)}…` : clean;
}

/** A permission the sign-in page asked for: always refused; the sentence says which and why. */
export function permissionRefusal(permission: string): string {
  const what = PERMISSION_WORDS[permission] ?? `for the "${shown(permission)}" permission`;
  return `The sign-in page asked ${what}: refused. A Wi-Fi sign-in page needs none of this computer's devices or data.`;
}

/** A download the sign-in page started: never saved; the sentence names the file and what to do. */
export function downloadRefusal(filename: string): string {
  const name = shown(filename.trim()) || 'a file';
  return `The sign-in page tried to download ${name}: refused, nothing was saved. A Wi-Fi sign-in needs no file; if you want it, download it in your browser once you are signed in.`;
}

/** Where the sign-in window was asked to go and may not (whyNotSignInPage), in a sentence; null when it may. */
export function pageRefusal(url: string, how: 'open' | 'navigate' | 'redirect' | 'new-window'): string | null {
  const why = whyNotSignInPage(url);
  if (why === null) return null;
  const what = { open: 'The network’s sign-in address', navigate: 'The sign-in page tried to go to a page that', redirect: 'The sign-in page was redirected to a page that', 'new-window': 'The sign-in page tried to open a window that' }[how];
  const verb = how === 'open' ? 'was not opened' : 'was refused';
  return `${what} ${verb}: ${why}. The sign-in window shows the network’s web pages only.`;
}

/** Says each distinct refusal once (per window): `say` returns whether this one is new. */
export class RefusalNotices {
  readonly #said = new Set<string>();

  say(sentence: string): boolean {
    if (this.#said.has(sentence)) return false;
    this.#said.add(sentence);
    return true;
  }

  /** A new window (or a new sign-in): everything may be said again. */
  reset(): void {
    this.#said.clear();
  }
}
