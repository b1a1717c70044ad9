import { useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import type { Settings } from '../../../proxy/control/api-types.js';
import { ApiRequestError, api } from '../api/client.js';
import { draftChanges, NUMERIC_FIELDS, toDraft, validateDraft, type SettingsDraft } from '../lib/settings.js';
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
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [saving, setSaving] = useState(false);

  const localErrors = useMemo(() => validateDraft(draft), [draft]);
  const changes = useMemo(() => draftChanges(saved, draft), [saved, draft]);
  const dirty = Object.keys(changes).length > 0;
  const errorFor = (k: keyof Settings): string | undefined => localErrors[k] ?? serverErrors[k];

  useEffect(() => setServerErrors({}), [draft]);
  // A save (ours or another window's) changes what is saved: show it.
  useEffect(() => setDraft(toDraft(saved)), [saved]);

  const set = <K extends keyof SettingsDraft>(k: K, v: SettingsDraft[K]): void => {
    setDraft((d) => ({ ...d, [k]: v }));
    setMessage(null);
  };

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (Object.keys(localErrors).length > 0) {
      setMessage({ kind: 'error', text: 'Fix the fields marked below; nothing was changed.' });
      return;
    }
    if (!dirty) return;
    setSaving(true);
    try {
      await api.saveSettings(changes);
      setMessage({ kind: 'ok', text: 'Saved. The proxy uses the new settings now and keeps them after a restart.' });
      await store.refresh('settings', 'status');
    } catch (err) {
      if (err instanceof ApiRequestError) {
        setServerErrors(err.fields);
        setMessage({ kind: 'error', text: `${err.message} Nothing was changed.` });
      } else setMessage({ kind: 'error', text: String(err) });
    } finally {
      setSaving(false);
    }
  };

  return (
    <form className="settings" onSubmit={(e) => void submit(e)} noValidate aria-label="Settings">
      {message && (
        <p className={message.kind === 'ok' ? 'notice notice-good' : 'notice notice-error'} role={message.kind === 'ok' ? 'status' : 'alert'}>
          <Icon name={message.kind === 'ok' ? 'check' : 'error'} /> {message.text}
        </p>
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
          help="EDNS padding (RFC 8467): queries in 128-byte blocks, and the resolver pads its answers to 468-byte blocks, so sizes don’t give away names. The cost: about 6 times the bytes per answer, so a burst of lookups on a slow link can take a round trip or two longer."
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
                    {f.help}
                  </p>
                )}
              </div>
            );
          })}
        </div>
      </fieldset>

      <div className="form-actions sticky-actions">
        <button type="submit" className="btn btn-primary" disabled={saving || !dirty}>
          {saving ? <Icon name="spinner" /> : <Icon name="check" />} Save settings
        </button>
        <button type="button" className="btn" disabled={saving || !dirty} onClick={() => setDraft(toDraft(saved))}>
          Discard changes
        </button>
        <span className="muted small">{dirty ? `${Object.keys(changes).length} unsaved change(s)` : 'No unsaved changes'}</span>
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
