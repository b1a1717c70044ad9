/**
 * A lookup through the OS resolver (getaddrinfo, as every program does), to
 * show the user that DNS works after a change, in words.
 */
import dns from 'node:dns';

export interface LookupReport {
  readonly name: string;
  readonly ok: boolean;
  readonly addresses: readonly string[];
  /** getaddrinfo's code (ENOTFOUND, EAI_AGAIN…) or TIMEOUT. */
  readonly error?: string;
  readonly ms: number;
  /** One line for the user. */
  readonly text: string;
}

export async function osLookup(name: string, timeoutMs = 12_000): Promise<LookupReport> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })), timeoutMs);
  });
  try {
    const all = await Promise.race([dns.promises.lookup(name, { all: true }), timeout]);
    const addresses = all.map((a) => a.address);
    const ms = Date.now() - start;
    return { name, ok: true, addresses, ms, text: `${name} resolves through the system (${addresses.join(', ')}, ${ms} ms)` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'ERROR';
    const ms = Date.now() - start;
    return { name, ok: false, addresses: [], error: code, ms, text: `${name} does not resolve through the system (${code} after ${ms} ms)` };
  } finally {
    clearTimeout(timer);
  }
}
