/** Inline SVG icons (24×24, stroke = currentColor). Decorative unless given a title. */
import type { BannerIcon } from '../lib/banner.js';
import type { EventIcon } from '../lib/events.js';

export type IconName =
  | BannerIcon
  | EventIcon
  | 'overview'
  | 'server'
  | 'link'
  | 'list'
  | 'clock'
  | 'sliders'
  | 'pause'
  | 'play'
  | 'download'
  | 'trash'
  | 'plus'
  | 'check'
  | 'x'
  | 'spinner'
  | 'search';

const PATHS: Record<IconName, string> = {
  'shield-check': 'M12 3 4 6v6c0 4.6 3.3 8.6 8 9.5 4.7-.9 8-4.9 8-9.5V6z M8.5 12.2l2.4 2.4 4.6-4.8',
  'shield-question': 'M12 3 4 6v6c0 4.6 3.3 8.6 8 9.5 4.7-.9 8-4.9 8-9.5V6z M9.8 9.6a2.3 2.3 0 1 1 3.3 2.1c-.7.4-1.1.9-1.1 1.7 M12 16.2v.1',
  'wifi-sign-in': 'M2.5 9a14 14 0 0 1 19 0 M5.5 12.3a9.5 9.5 0 0 1 13 0 M8.6 15.6a5 5 0 0 1 6.8 0 M12 19.2v.1',
  unlocked: 'M5 11h14v10H5z M8 11V7.5a4 4 0 0 1 7.7-1.5 M12 15v2.5',
  blocked: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z M5.7 5.7l12.6 12.6',
  power: 'M12 3v9 M6.3 6.8a8 8 0 1 0 11.4 0',
  plug: 'M9 3v5 M15 3v5 M7 8h10v4a5 5 0 0 1-10 0z M12 17v4',
  resume: 'M20 12a8 8 0 1 1-2.3-5.7 M20 4v5h-5 M10 9.5l4.5 2.5-4.5 2.5z',
  unplug: 'M9 3v5 M15 3v5 M7 8h10v4a5 5 0 0 1-10 0z M12 17v4 M3 3l18 18',
  heart: 'M12 20s-7.5-4.6-7.5-10A4.3 4.3 0 0 1 12 7.4 4.3 4.3 0 0 1 19.5 10c0 5.4-7.5 10-7.5 10z',
  error: 'M12 3 2 20h20z M12 10v4.5 M12 17.2v.1',
  state: 'M12 3 4 6v6c0 4.6 3.3 8.6 8 9.5 4.7-.9 8-4.9 8-9.5V6z',
  switch: 'M4 8h13 M13 4l4 4-4 4 M20 16H7 M11 12l-4 4 4 4',
  gear: 'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6z M19.4 13.5l1.6 1.2-2 3.4-1.9-.7a7 7 0 0 1-1.7 1l-.3 2h-4l-.3-2a7 7 0 0 1-1.7-1l-1.9.7-2-3.4 1.6-1.2a7 7 0 0 1 0-2L3.1 9.9l2-3.4 1.9.7a7 7 0 0 1 1.7-1l.3-2h4l.3 2a7 7 0 0 1 1.7 1l1.9-.7 2 3.4-1.6 1.2a7 7 0 0 1 0 2z',
  overview: 'M4 4h7v7H4z M13 4h7v4h-7z M13 10h7v10h-7z M4 13h7v7H4z',
  server: 'M4 4h16v6H4z M4 14h16v6H4z M8 7h.01 M8 17h.01',
  link: 'M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1 M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1',
  list: 'M8 6h13 M8 12h13 M8 18h13 M3.5 6h.01 M3.5 12h.01 M3.5 18h.01',
  clock: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z M12 7v5l3 2',
  sliders: 'M4 6h10 M18 6h2 M4 12h4 M12 12h8 M4 18h12 M20 18h0 M14 4v4 M8 10v4 M16 16v4',
  pause: 'M8 5v14 M16 5v14',
  play: 'M7 4l13 8-13 8z',
  download: 'M12 4v11 M7 10l5 5 5-5 M5 20h14',
  trash: 'M4 7h16 M10 11v6 M14 11v6 M6 7l1 13h10l1-13 M9 7V4h6v3',
  plus: 'M12 5v14 M5 12h14',
  check: 'M5 12.5l4.5 4.5L19 7.5',
  x: 'M6 6l12 12 M18 6 6 18',
  spinner: 'M12 3a9 9 0 1 0 9 9',
  search: 'M10.5 4a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13z M15.5 15.5 20 20',
};

export function Icon({ name, title, className }: { name: IconName; title?: string; className?: string }) {
  return (
    <svg
      className={`icon${className ? ` ${className}` : ''}${name === 'spinner' ? ' spin' : ''}`}
      viewBox="0 0 24 24"
      width="1em"
      height="1em"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
      role={title ? 'img' : undefined}
      aria-hidden={title ? undefined : true}
      aria-label={title}
      focusable="false"
    >
      <path d={PATHS[name]} />
    </svg>
  );
}
