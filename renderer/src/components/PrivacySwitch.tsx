import { useEffect, useId, useRef, useState } from 'react';
import { PAUSE_CHOICES, switchModel, switchVerdict } from '../lib/switch.js';
import { useAsOf, useDashboard, useReach } from '../state/context.js';
import { useSystemDns, useSystemDnsChange } from '../state/system-dns.js';

/**
 * The header's one switch for the machine's private DNS (issue 24, item 1).
 * Off or paused: one click turns it on. On: it asks for how long (5 min,
 * 1 hour, until I resume) before giving the old DNS back. Shown only when
 * this dotstub manages system DNS and may change it. Switched on, its words
 * and colour follow the privacy verdict: "On — not working: …" in red while
 * every lookup fails, never a green "On" (issue 29).
 */
export function PrivacySwitch() {
  const view = useSystemDns();
  const change = useSystemDnsChange();
  const now = useAsOf(1000);
  const status = useDashboard((s) => s.status);
  const events = useDashboard((s) => s.events);
  const m = switchModel(view, now, switchVerdict(status, events));
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const box = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  // Not connected or not signed in: the switch's state is unknown, and it couldn't change anything.
  const reach = useReach();

  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent): void => {
      if (box.current && !box.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [open]);

  if (m.state === 'none' || reach === 'lost' || reach === 'signed-out') return null;

  const run = async (c: Parameters<typeof change>[0]): Promise<void> => {
    setBusy(true);
    setError(null);
    setOpen(false);
    try {
      await change(c);
    } catch (err) {
      setError(`${err instanceof Error ? err.message : String(err)}. Nothing was changed.`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div
      className={`privacy-switch switch-${m.state} switch-tone-${m.tone}`}
      ref={box}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && open) {
          e.stopPropagation();
          setOpen(false);
          button.current?.focus();
        }
      }}
    >
      <button
        ref={button}
        type="button"
        role="switch"
        aria-checked={m.checked}
        data-verdict={m.tone}
        aria-expanded={m.checked ? open : undefined}
        aria-controls={m.checked && open ? id : undefined}
        disabled={busy}
        onClick={() => (m.checked ? setOpen(!open) : void run({ enabled: true }))}
      >
        <span className="switch-track" aria-hidden="true">
          <span className="switch-thumb" />
        </span>
        <span className="switch-label">Private DNS</span>
        <span className="switch-word">{busy ? 'Working…' : m.word}</span>
      </button>
      {open && (
        <div className="switch-menu" id={id} role="group" aria-label="Turn private DNS off for">
          <p className="small">Turn off for:</p>
          {PAUSE_CHOICES.map((c, i) => (
            <button
              key={c.label}
              type="button"
              className="btn btn-small"
              // The first choice takes the keyboard, so Enter, Enter pauses for 5 minutes.
              autoFocus={i === 0}
              onClick={() => void run({ enabled: false, pauseSeconds: c.seconds })}
            >
              {c.label}
            </button>
          ))}
        </div>
      )}
      {error && (
        <p className="switch-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
