import { describe, expect, it } from 'vitest';
import { EMPTY_FORM, formToBody } from './resolver-form.js';

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
