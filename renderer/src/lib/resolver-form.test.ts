import { describe, expect, it } from 'vitest';
import { EMPTY_FORM, formToBody, refusalSummary } from './resolver-form.js';

describe('formToBody', () => {
  it('builds the API body, pins split on lines and commas', () => {
    const { body, errors } = formToBody({ label: ' Lab ', address: '127.0.0.1', port: '8853', authName: 'dns.test', pins: 'a=\n b= , c=' });
    expect(errors).toEqual({});
    expect(body).toEqual({ label: 'Lab', address: '127.0.0.1', port: 8853, authName: 'dns.test', pins: ['a=', 'b=', 'c='] });
  });

  it('asks for an address and a sane port', () => {
    const { errors } = formToBody({ ...EMPTY_FORM, port: '70000' });
    expect(errors.address).toMatch(/IP address/);
    expect(errors.port).toMatch(/1 to 65535/);
  });

  it('an empty port means 853', () => {
    expect(formToBody({ ...EMPTY_FORM, address: '9.9.9.9', port: '' }).body.port).toBe(853);
  });
});

describe('refusalSummary', () => {
  it('points to the marked fields for a validation refusal, and says other refusals as they are', () => {
    expect(refusalSummary({ code: 'validation', message: 'address: taken', fields: { address: 'taken' } })).toBe('Not added: one field needs a change (marked below).');
    expect(refusalSummary({ code: 'validation', message: 'x', fields: { address: 'a', authName: 'b' } })).toBe('Not added: 2 fields need a change (marked below).');
    expect(refusalSummary({ code: 'resolver_limit', message: 'at most 64 custom resolvers; remove one first', fields: {} })).toBe(
      'Not added: at most 64 custom resolvers; remove one first',
    );
  });
});
