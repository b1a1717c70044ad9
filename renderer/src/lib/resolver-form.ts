/** The add-resolver form's text → the API body, with the checks the browser can make first. */
import type { CustomResolverBody } from '../../../proxy/control/api-types.js';

export interface FormText {
  label: string;
  address: string;
  port: string;
  authName: string;
  pins: string;
}

export const EMPTY_FORM: FormText = { label: '', address: '', port: '853', authName: '', pins: '' };
export type FieldName = keyof FormText;

/** Form text → the API body, plus messages for what the browser can tell is wrong. */
export function formToBody(f: FormText): { body: CustomResolverBody; errors: Partial<Record<FieldName, string>> } {
  const errors: Partial<Record<FieldName, string>> = {};
  const port = f.port.trim() === '' ? 853 : Number(f.port.trim());
  if (!f.address.trim()) errors.address = 'Enter the resolver’s IP address, e.g. 9.9.9.9 (names need DNS to find DNS).';
  if (!Number.isInteger(port) || port < 1 || port > 65535) errors.port = 'Use a port from 1 to 65535; DNS-over-TLS is usually 853.';
  const pins = f.pins
    .split(/[\s,]+/)
    .map((p) => p.trim())
    .filter(Boolean);
  const body: CustomResolverBody = {
    address: f.address.trim(),
    port: Number.isFinite(port) ? port : undefined,
    ...(f.label.trim() ? { label: f.label.trim() } : {}),
    ...(f.authName.trim() ? { authName: f.authName.trim() } : {}),
    ...(pins.length ? { pins } : {}),
  };
  return { body, errors };
}


/** The line above the form when the proxy refused it: field problems are shown beside their fields, so the summary only points there. */
export function refusalSummary(err: { readonly code: string; readonly message: string; readonly fields: Readonly<Record<string, string>> }): string {
  const n = Object.keys(err.fields).length;
  if (err.code === 'validation' && n > 0) return `Not added: ${n === 1 ? 'one field needs' : `${n} fields need`} a change (marked below).`;
  return `Not added: ${err.message}`;
}
