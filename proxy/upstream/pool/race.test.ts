/** The Happy Eyeballs race on its own (RFC 8305 §5), with fake connections it opens through the callback. */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { FakeConnection } from '../../../test-support/fake-connection.js';
import { CertificateError, ConnectFailedError, ConnectTimeoutError } from '../../errors.js';
import { ConnectionRace, mostTelling, raceAddresses, type AddressAttempt } from './race.js';

const V6 = '2001:db8::1';
const V4 = '192.0.2.1';

afterEach(() => {
  vi.useRealTimers();
});

function race(addresses: string[]): { race: ConnectionRace; opened: FakeConnection[] } {
  const opened: FakeConnection[] = [];
  let id = 0;
  const r = new ConnectionRace(addresses, 250, (address) => {
    const c = new FakeConnection({ id: ++id, address, session: undefined }, 100);
    opened.push(c);
    return c;
  });
  return { race: r, opened };
}

describe('the connection race', () => {
  test('one address of each family, IPv6 first, moving on with the index', () => {
    expect(raceAddresses([V4, V6, '192.0.2.2'], 0)).toEqual([V6, V4]);
    expect(raceAddresses([V4, V6, '192.0.2.2'], 1)).toEqual([V6, '192.0.2.2']);
    expect(raceAddresses([V4, '192.0.2.2'], 1)).toEqual(['192.0.2.2']);
  });

  test('the next address starts after the delay; the first to authenticate wins and its rival is abandoned', () => {
    vi.useFakeTimers();
    const { race: r, opened } = race([V6, V4]);
    r.start();
    expect(opened.map((c) => c.address)).toEqual([V6]);
    vi.advanceTimersByTime(250);
    expect(opened.map((c) => c.address)).toEqual([V6, V4]);
    vi.advanceTimersByTime(50);
    const abandoned: FakeConnection[] = [];
    const result = r.won(opened[1] as FakeConnection, (c) => abandoned.push(c as FakeConnection));
    expect(abandoned).toEqual([opened[0]]);
    expect(result?.winner).toBe(V4);
    expect(result?.attempts.map((a) => [a.address, a.startMs, a.afterMs, a.outcome])).toEqual([
      [V6, 0, null, 'abandoned'],
      [V4, 250, 50, 'won'],
    ]);
    expect(r.done).toBe(true);
    expect(r.won(opened[0] as FakeConnection, () => undefined)).toBeUndefined();
  });

  test('a failure starts the next address at once; the race is lost only when every address failed', () => {
    vi.useFakeTimers();
    const { race: r, opened } = race([V6, V4]);
    r.start();
    expect(r.failed(opened[0] as FakeConnection, new ConnectFailedError('refused'))).toBe(true);
    expect(opened.map((c) => c.address)).toEqual([V6, V4]);
    vi.advanceTimersByTime(100);
    expect(r.failed(opened[1] as FakeConnection, new ConnectTimeoutError('no answer'))).toBe(false);
    expect(r.done).toBe(true);
    expect(r.attempts().map((a) => [a.address, a.afterMs, a.outcome])).toEqual([
      [V6, 0, 'failed'],
      [V4, 100, 'failed'],
    ]);
    vi.advanceTimersByTime(1000);
    expect(opened).toHaveLength(2);
  });

  test('the most telling failure: interception, then anything but "no route", then the first', () => {
    const attempt = (error: AddressAttempt['error']): AddressAttempt => ({ address: V4, startMs: 0, afterMs: 1, outcome: 'failed', error });
    const noRoute = new ConnectFailedError('no route', { cause: Object.assign(new Error('x'), { code: 'ENETUNREACH' }) });
    const timeout = new ConnectTimeoutError('no answer');
    const cert = new CertificateError('bad certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(mostTelling([attempt(noRoute), attempt(timeout), attempt(cert)])).toBe(cert);
    expect(mostTelling([attempt(noRoute), attempt(timeout)])).toBe(timeout);
    expect(mostTelling([attempt(noRoute)])).toBe(noRoute);
    expect(mostTelling([])).toBeUndefined();
  });
});
