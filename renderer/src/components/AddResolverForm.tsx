import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { api } from '../api/client.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { EMPTY_FORM, formToBody, refusalSummary, type FieldName, type FormText } from '../lib/resolver-form.js';
import { useStore } from '../state/context.js';
import { Icon } from './Icon.js';

/** Add a custom resolver; the API's validation messages appear beside the field they are about. */
export function AddResolverForm() {
  const store = useStore();
  const id = useId();
  const [form, setForm] = useState<FormText>(EMPTY_FORM);
  const [errors, setErrors] = useState<Partial<Record<string, string>>>({});
  const [summary, setSummary] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const validateTimer = useRef<number | null>(null);
  const touched = useRef(new Set<FieldName>());
  // The form as last rendered: what a submit's answer compares with what it sent.
  const latest = useRef(form);
  latest.current = form;

  const validate = useCallback((next: FormText) => {
    if (validateTimer.current !== null) window.clearTimeout(validateTimer.current);
    validateTimer.current = window.setTimeout(() => {
      const { body, errors: local } = formToBody(next);
      if (!body.address) {
        setErrors(pick(local, touched.current));
        return;
      }
      api
        .validateResolver(body)
        .then((v) => setErrors(pick({ ...local, ...v.fields }, touched.current)))
        .catch(() => setErrors(pick(local, touched.current)));
    }, 300);
  }, []);

  useEffect(() => () => {
    if (validateTimer.current !== null) window.clearTimeout(validateTimer.current);
  }, []);

  const change = (field: FieldName, value: string): void => {
    const next = { ...form, [field]: value };
    setForm(next);
    setAdded(null);
    if (touched.current.has(field)) validate(next);
  };
  const blur = (field: FieldName): void => {
    touched.current.add(field);
    validate(form);
  };

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    for (const k of Object.keys(EMPTY_FORM) as FieldName[]) touched.current.add(k);
    const { body, errors: local } = formToBody(form);
    if (Object.keys(local).length) {
      setErrors(local);
      setSummary('Fix the fields marked below.');
      return;
    }
    setSaving(true);
    setSummary(null);
    const submitted = form;
    try {
      const r = await api.addResolver(body);
      setAdded(`Added ${r.label}. Use it from the list above.`);
      // Emptied for the next one, unless the next one is already being typed: the list shows the new resolver as
      // soon as the stream pushes it, which can be before this answer comes (the typing must not be wiped).
      if (latest.current === submitted) {
        setForm(EMPTY_FORM);
        setErrors({});
        touched.current.clear();
      }
      await store.refresh('resolvers');
    } catch (err) {
      if (err instanceof ControlError) {
        setErrors(err.fields);
        setSummary(refusalSummary(err));
      } else setSummary(String(err));
    } finally {
      setSaving(false);
    }
  };

  const field = (name: FieldName, label: string, props: { placeholder?: string; hint?: string; inputMode?: 'numeric' | 'text' } = {}) => {
    const err = errors[name];
    const fid = `${id}-${name}`;
    return (
      <div className={`field${err ? ' invalid' : ''}`}>
        <label htmlFor={fid}>{label}</label>
        <input
          id={fid}
          name={name}
          value={form[name]}
          placeholder={props.placeholder}
          inputMode={props.inputMode}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={err ? true : undefined}
          aria-describedby={err ? `${fid}-err` : props.hint ? `${fid}-hint` : undefined}
          onChange={(e) => change(name, e.target.value)}
          onBlur={() => blur(name)}
        />
        {err ? (
          <p id={`${fid}-err`} className="field-error">
            <Icon name="error" /> {err}
          </p>
        ) : (
          props.hint && (
            <p id={`${fid}-hint`} className="field-hint">
              {props.hint}
            </p>
          )
        )}
      </div>
    );
  };

  return (
    <form className="add-resolver" onSubmit={(e) => void submit(e)} aria-labelledby={`${id}-title`} noValidate>
      <h2 id={`${id}-title`}>Add a custom resolver</h2>
      {summary && (
        <p className="error-text" role="alert">
          {summary}
        </p>
      )}
      <div className="form-grid">
        {field('label', 'Name', { placeholder: 'My resolver', hint: 'Shown in this list; optional.' })}
        {field('address', 'Address', { placeholder: '9.9.9.9', hint: 'One IP address, or several separated by commas.' })}
        {field('port', 'Port', { placeholder: '853', inputMode: 'numeric' })}
        {field('authName', 'Authentication name', { placeholder: 'dns.example.net', hint: 'The name on its TLS certificate.' })}
      </div>
      <div className={`field${errors.pins ? ' invalid' : ''}`}>
        <label htmlFor={`${id}-pins`}>SPKI pins (optional)</label>
        <textarea
          id={`${id}-pins`}
          rows={2}
          value={form.pins}
          placeholder="base64 SHA-256 of the public key, one per line"
          spellCheck={false}
          aria-invalid={errors.pins ? true : undefined}
          aria-describedby={errors.pins ? `${id}-pins-err` : undefined}
          onChange={(e) => change('pins', e.target.value)}
          onBlur={() => blur('pins')}
        />
        {errors.pins && (
          <p id={`${id}-pins-err`} className="field-error">
            <Icon name="error" /> {errors.pins}
          </p>
        )}
      </div>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={saving}>
          {saving ? <Icon name="spinner" /> : <Icon name="plus" />} Add resolver
        </button>
        <span role="status" className="good-text">
          {added}
        </span>
      </div>
    </form>
  );
}

function pick<T extends Partial<Record<string, string>>>(errors: T, fields: ReadonlySet<string>): Partial<Record<string, string>> {
  const out: Partial<Record<string, string>> = {};
  for (const [k, v] of Object.entries(errors)) if (fields.has(k) && v) out[k] = v;
  return out;
}
