import { describe, expect, it } from 'vitest';
import { bearer, signIn } from './session.js';

const TOKEN = 'A'.repeat(20) + '_-' + 'b'.repeat(21); // 43 base64url characters, like the server's

describe('signIn', () => {
  it('takes the token from the link fragment, saves it, and leaves a clean route in the address bar', () => {
    expect(signIn(`#token=${TOKEN}`, null)).toEqual({ kind: 'token', token: TOKEN, store: true, hash: '#/' });
    expect(signIn(`#token=${TOKEN}&/queries`, null)).toEqual({ kind: 'token', token: TOKEN, store: true, hash: '#/queries' });
  });

  it('a link wins over the token this tab saved earlier (it is the newer one)', () => {
    const other = 'z'.repeat(43);
    expect(signIn(`#token=${TOKEN}`, other)).toMatchObject({ kind: 'token', token: TOKEN, store: true });
  });

  it('without a fragment, uses the saved token and leaves the address bar alone', () => {
    expect(signIn('#/resolvers', TOKEN)).toEqual({ kind: 'token', token: TOKEN, store: false, hash: null });
    expect(signIn('', TOKEN)).toEqual({ kind: 'token', token: TOKEN, store: false, hash: null });
  });

  it('no token anywhere → missing', () => {
    expect(signIn('', null)).toEqual({ kind: 'missing', hash: null });
    expect(signIn('#/queries', null)).toEqual({ kind: 'missing', hash: null });
    // A saved value that isn't a token (storage edited by hand) is not used.
    expect(signIn('', 'garbage')).toEqual({ kind: 'missing', hash: null });
  });

  it('a damaged token in the link → malformed, and it still leaves the address bar', () => {
    expect(signIn(`#token=${TOKEN.slice(0, 30)}`, null)).toEqual({ kind: 'malformed', hash: '#/' });
    expect(signIn('#token=', TOKEN)).toEqual({ kind: 'malformed', hash: '#/' });
    expect(signIn('#token=%E0%A4%A', null)).toEqual({ kind: 'malformed', hash: '#/' });
    expect(signIn(`#token=${TOKEN}<script>`, null)).toMatchObject({ kind: 'malformed' });
  });

  it('bearer header value', () => {
    expect(bearer(TOKEN)).toBe(`Bearer ${TOKEN}`);
  });
});
