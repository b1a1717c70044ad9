import { useEffect, useId, useMemo, useRef, useState, type FormEvent } from 'react';
import type { Settings } from '../../../proxy/control/api-types.js';
import { api } from '../api/client.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { draftChanges, errorList, NUMERIC_FIELDS, toDraft, validateDraft, type SettingsDraft } from '../lib/settings.js';
import { useDashboard, useStore } from '../state/context.js';
import { Icon } from './Icon.js';

/** The proxy's settings with inline validation; the API checks again and its messages win. */
export function SettingsForm() {
  const settings = useDashboard((s) => s.settings);
  if (!settings) return <p className="muted">Loading settings…</p>;
  return <SettingsEditor saved={settings} />;
}

function SettingsEditor({ saved }: { saved: Settings }) {
  const store = useStore();
  const id = useId();
  const [draft, setDraft] = useState<SettingsDraft>(() => toDraft(saved));
  const [serverErrors, setServerErrors] = useState<Readonly<Record<string, string>>>({});
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string; at?: number } | null>(null);
  const [saving, setSaving] = useState(false);
  /** Set when a save was tried with errors: the list of them shows at the top. */
  const [tried, setTried] = useState(false);
  /** Where the user tried to go with unsaved edits (a #/ link), while we ask. */
  const [leaving, setLeaving] = useState<string | null>(null);
  const stayRef = useRef<HTMLButtonElement>(null);
  /** The message after a save; a failed save moves focus to it (issue 29: focus stayed on Save, the failure unheard past the alert). */
  const messageRef = useRef<HTMLParagraphElement>(null);

  const localErrors = useMemo(() => validateDraft(draft), [draft]);
  const changes = useMemo(() => draftChanges(saved, draft), [saved, draft]);
  const dirty = Object.keys(changes).length > 0;
  const errorFor = (k: keyof Settings): string | undefined => localErrors[k] ?? serverErrors[k];

  useEffect(() => setServerErrors({}), [draft]);
  // Each failed save (`at` tells two alike apart) takes focus to what went wrong; the list of fields follows it.
  useEffect(() => {
    if (message?.kind === 'error') messageRef.current?.focus();
  }, [message]);

  // Unsaved edits: closing or reloading the tab asks (the browser's own prompt); a link to
  // another section asks here first (Stay, or discard and go).
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent): void => {
      e.preventDefault();
      e.returnValue = '';
    };
    const onClick = (e: MouseEvent): void => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const a = e.target instanceof Element ? e.target.closest('a[href^="#/"]') : null;
      if (!a) return;
      e.preventDefault();
      setLeaving(a.getAttribute('href'));
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    document.addEventListener('click', onClick, true);
    return () => {
      window.removeEventListener('beforeunload', onBeforeUnload);
      document.removeEventListener('click', onClick, true);
    };
  }, [dirty]);
  useEffect(() => {
    if (leaving !== null) stayRef.current?.focus();
  }, [leaving]);
  const leave = (): void => {
    const to = leaving;
    setLeaving(null);
    setDraft(toDraft(saved));
    if (to !== null) window.location.hash = to;
  };
  // A save (ours or another window's) changes what is saved: show it.
  useEffect(() => setDraft(toDraft(saved)), [saved]);

  const allErrors = { ...serverErrors, ...localErrors };
  const listed = tried ? errorList(allErrors) : [];

  const set = <K extends keyof SettingsDraft>(k: K, v: SettingsDraft[K]): void => {
    setDraft((d) => ({ ...d, [k]: v }));
    setMessage(null);
  };

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (Object.keys(localErrors).length > 0) {
      setTried(true);
      setMessage({ kind: 'error', text: 'Nothing was saved. Fix these first:', at: Date.now() });
      return;
    }
    if (!dirty) return;
    setSaving(true);
    try {
      // The answer is the settings in effect; the status follows on the stream.
      store.applySettings(await api.saveSettings(changes));
      setMessage({ kind: 'ok', text: 'Saved. The proxy uses the new settings now and keeps them after a restart.' });
    } catch (err) {
      if (err instanceof ControlError) {
        setServerErrors(err.fields);
        setTried(true);
        setMessage({ kind: 'error', text: `${err.message} Nothing was changed.`, at: Date.now() });
      } else setMessage({ kind: 'error', text: String(err), at: Date.now() });
    } finally {
      setSaving(false);
    }
  };

  return (
    <form className="settings" onSubmit={(e) => void submit(e)} noValidate aria-label="Settings">
      {message && (
        <p
          ref={messageRef}
          tabIndex={-1}
          className={message.kind === 'ok' ? 'notice notice-good' : 'notice notice-error'}
          role={message.kind === 'ok' ? 'status' : 'alert'}
        >
          <Icon name={message.kind === 'ok' ? 'check' : 'error'} /> {message.text}
        </p>
      )}
      {listed.length > 0 && (
        <ul className="error-summary" aria-label="Settings to fix" data-testid="settings-errors">
          {listed.map((e) => (
            <li key={e.key}>
              <a href={`#${id}-${e.key}`} onClick={(ev) => (ev.preventDefault(), document.getElementById(`${id}-${e.key}`)?.focus())}>
                {e.label}
              </a>
              : {e.message}
            </li>
          ))}
        </ul>
      )}

      <fieldset className="card">
        <legend>Privacy</legend>
        <div className="radio-cards" role="radiogroup" aria-label="When the resolver can't be verified">
          <label className={`radio-card${draft.mode === 'strict' ? ' on' : ''}`}>
            <input type="radio" name="mode" value="strict" checked={draft.mode === 'strict'} onChange={() => set('mode', 'strict')} />
            <span>
              <strong>Strict</strong>
              <span className="muted small">Only an authenticated resolver. If it can’t be verified, lookups fail rather than leak.</span>
            </span>
          </label>
          <label className={`radio-card${draft.mode === 'opportunistic' ? ' on' : ''}`}>
            <input
              type="radio"
              name="mode"
              value="opportunistic"
              checked={draft.mode === 'opportunistic'}
              onChange={() => set('mode', 'opportunistic')}
            />
            <span>
              <strong>Opportunistic</strong>
              <span className="muted small">Use TLS even when the certificate doesn’t verify (shown as unverified). Never cleartext.</span>
            </span>
          </label>
        </div>
        {serverErrors.mode && <p className="field-error">{serverErrors.mode}</p>}
        <Toggle
          id={`${id}-padding`}
          label="Pad queries"
          help="EDNS padding (RFC 8467): queries in 128-byte blocks, and the resolver pads its answers to 468-byte blocks, so sizes don’t give away names. The cost: about 6 times the bytes per answer, so a burst of lookups on a slow link can take a round trip or two longer; extra connections for bursts win most of that back."
          checked={draft.padding}
          onChange={(v) => set('padding', v)}
          error={serverErrors.padding}
        />
        <Toggle
          id={`${id}-names`}
          label="Record names in the query log"
          help="Off: don’t record names. The log keeps timings only, and exports contain no names."
          checked={draft.recordNames}
          onChange={(v) => set('recordNames', v)}
          error={serverErrors.recordNames}
        />
      </fieldset>

      <fieldset className="card">
        <legend>Wi-Fi sign-in and blocked networks</legend>
        <Toggle
          id={`${id}-portalCheck`}
          label="Check for Wi-Fi sign-in pages"
          help="When encrypted DNS fails right after joining a network, look for a hotel or café sign-in page and let only its names through, unencrypted, while you sign in (strict mode asks first). Also checks once per network whether it answers DNS for every address (strict mode: only where you allowed local names)."
          checked={draft.portalCheck}
          onChange={(v) => set('portalCheck', v)}
          error={serverErrors.portalCheck}
        />
        <Toggle
          id={`${id}-cleartextFallback`}
          label="Cleartext fallback (opportunistic mode only)"
          help="While a network blocks encrypted DNS, let its own resolver answer, unencrypted: lookups work, but anyone on the network can read them. Off by default; never in strict mode."
          checked={draft.cleartextFallback}
          onChange={(v) => set('cleartextFallback', v)}
          error={errorFor('cleartextFallback')}
        />
        <div className={`field${errorFor('networkDns') ? ' invalid' : ''}`}>
          <label htmlFor={`${id}-networkDns`}>Network DNS</label>
          <input
            id={`${id}-networkDns`}
            name="networkDns"
            value={draft.networkDns}
            placeholder="found automatically"
            aria-invalid={errorFor('networkDns') ? true : undefined}
            aria-describedby={`${id}-networkDns-${errorFor('networkDns') ? 'err' : 'hint'}`}
            onChange={(e) => set('networkDns', e.target.value)}
          />
          {errorFor('networkDns') ? (
            <p id={`${id}-networkDns-err`} className="field-error">
              <Icon name="error" /> {errorFor('networkDns')}
            </p>
          ) : (
            <p id={`${id}-networkDns-hint`} className="field-hint">
              This network’s own resolver (your router, e.g. 192.168.1.1): the only server ever asked unencrypted. Empty: found from the system.
            </p>
          )}
        </div>
      </fieldset>

      <fieldset className="card">
        <legend>Connections and log</legend>
        <div className="form-grid">
          {NUMERIC_FIELDS.map((f) => {
            const err = errorFor(f.key);
            const fid = `${id}-${f.key}`;
            return (
              <div key={f.key} className={`field${err ? ' invalid' : ''}`}>
                <label htmlFor={fid}>{f.label}</label>
                <div className="input-unit">
                  <input
                    id={fid}
                    name={f.key}
                    inputMode="numeric"
                    value={draft[f.key]}
                    aria-invalid={err ? true : undefined}
                    aria-describedby={`${fid}-${err ? 'err' : 'hint'}`}
                    onChange={(e) => set(f.key, e.target.value)}
                  />
                  <span className="unit" aria-hidden="true">
                    {f.unit}
                  </span>
                </div>
                {err ? (
                  <p id={`${fid}-err`} className="field-error">
                    <Icon name="error" /> {err}
                  </p>
                ) : (
                  <p id={`${fid}-hint`} className="field-hint">
                    {f.help} <span className="field-range">{f.range}</span>
                  </p>
                )}
              </div>
            );
          })}
        </div>
      </fieldset>

      <div className="form-actions sticky-actions">
        {leaving !== null && (
          <div className="leave-guard" role="alertdialog" aria-labelledby={`${id}-leave`} aria-modal="false">
            <p id={`${id}-leave`}>
              <Icon name="error" /> You have {Object.keys(changes).length} unsaved {Object.keys(changes).length === 1 ? 'change' : 'changes'}. Leave Settings
              without saving?
            </p>
            <button ref={stayRef} type="button" className="btn btn-primary btn-small" onClick={() => setLeaving(null)}>
              Stay and keep editing
            </button>
            <button type="button" className="btn btn-small" onClick={leave}>
              Discard changes and leave
            </button>
          </div>
        )}
        <button type="submit" className="btn btn-primary" disabled={saving || !dirty}>
          {saving ? <Icon name="spinner" /> : <Icon name="check" />} Save settings
        </button>
        <button
          type="button"
          className="btn"
          disabled={saving || !dirty}
          onClick={() => {
            setDraft(toDraft(saved));
            setTried(false);
          }}
        >
          Discard changes
        </button>
        <span className="muted small" data-testid="unsaved">
          {dirty ? `${Object.keys(changes).length} unsaved ${Object.keys(changes).length === 1 ? 'change' : 'changes'}` : 'No unsaved changes'}
        </span>
      </div>
    </form>
  );
}

function Toggle({
  id,
  label,
  help,
  checked,
  onChange,
  error,
}: {
  id: string;
  label: string;
  help: string;
  checked: boolean;
  onChange: (v: boolean) => void;
  error: string | undefined;
}) {
  return (
    <div className="toggle-row">
      <input
        id={id}
        type="checkbox"
        role="switch"
        className="switch"
        checked={checked}
        aria-describedby={`${id}-help`}
        onChange={(e) => onChange(e.target.checked)}
      />
      <div>
        <label htmlFor={id}>{label}</label>
        <p id={`${id}-help`} className="field-hint">
          {help}
        </p>
        {error && <p className="field-error">{error}</p>}
      </div>
    </div>
  );
}
