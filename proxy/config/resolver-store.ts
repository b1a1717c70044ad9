/**
 * The resolvers a user can pick: the presets, the custom ones they added
 * (persisted in `resolvers.json` with the active choice), and resolvers given
 * on the command line for one run (not persisted).
 *
 * Field-by-field validation reuses resolvers.ts so the CLI and the API give
 * the same messages.
 */
import path from 'node:path';
import type { z } from 'zod';
import { invalidFields, issueFields, JsonConfigFile, type ConfigProblem } from '../files/config-file.js';
import { lazily, type ZodApi } from '../files/zod.js';
import { isDotstubError } from '../errors.js';
import { issueCodes, type FieldCode } from '../error-codes.js';
import { customResolver, PRESETS, retiredPreset, validateAuthName, validateDohUrl, validatePin, type ResolverSpec, type RetiredPreset } from './resolvers.js';

export const MAX_CUSTOM_RESOLVERS = 64;

/** The API's and the file's form of a custom resolver (before semantic checks). */
function customResolverBodySchema(z: ZodApi) {
  return z.strictObject({
    label: z.string({ error: 'label must be text' }).trim().max(64, { error: 'label must be at most 64 characters' }).optional(),
    address: z.string({ error: 'address is required: the resolver\'s IP address (several separated by commas)' }).max(512, { error: 'address is too long' }),
    port: z.int({ error: 'port must be a whole number from 1 to 65535 (DoT is 853)' }).optional(),
    authName: z.string({ error: 'authName must be text' }).max(253, { error: 'authName is too long' }).optional(),
    pins: z.array(z.string({ error: 'each pin must be text' }), { error: 'pins must be a list of base64 SPKI pins' }).max(16, { error: 'at most 16 pins' }).optional(),
    dohUrl: z.string({ error: 'dohUrl must be text: the resolver\'s DNS-over-HTTPS URL, e.g. https://dns.quad9.net/dns-query' }).max(2048, { error: 'dohUrl is too long' }).optional(),
  });
}
const bodySchema = lazily(customResolverBodySchema);
export type CustomResolverBody = z.infer<ReturnType<typeof customResolverBodySchema>>;

/** A failure names each field at fault twice: a sentence for the form, a code (../error-codes.ts; 'bad_value' when absent) for programs. */
export type ResolverValidation = { ok: true; spec: ResolverSpec } | { ok: false; fields: Record<string, string>; codes: Record<string, FieldCode> };

function messageOf(err: unknown): string {
  if (isDotstubError(err)) return err.message;
  throw err;
}

/** What a new resolver is checked against besides its own fields. */
export interface ResolverContext {
  /** Every resolver already listed (presets, custom, the command line's). */
  readonly existing: readonly ResolverSpec[];
  /** The resolver in use, named as such in a conflict. */
  readonly activeId: string | null;
  /** Strict mode needs a way to authenticate the resolver (RFC 8310). */
  readonly strict: boolean;
}

/**
 * The listed resolver that already answers at one of spec's addresses on its
 * port, if any. The id is derived from address and port, so adding a second
 * one there would silently replace (and rename) the first.
 */
export function addressConflict(spec: Pick<ResolverSpec, 'addresses' | 'port'>, existing: readonly ResolverSpec[]): ResolverSpec | undefined {
  const mine = new Set(spec.addresses.map((a) => a.toLowerCase()));
  return existing.find((r) => r.port === spec.port && r.addresses.some((a) => mine.has(a.toLowerCase())));
}

/** The checks against what is already configured, as field messages (empty when none applies). */
function contextFields(spec: ResolverSpec, ctx: ResolverContext): Record<string, string> {
  const fields: Record<string, string> = {};
  const taken = addressConflict(spec, ctx.existing);
  if (taken) {
    const at = `${taken.addresses.find((a) => spec.addresses.includes(a)) ?? taken.addresses[0]}:${taken.port}`;
    const inUse = taken.id === ctx.activeId ? ', the resolver in use' : '';
    fields.address = `${at} is already “${taken.label}”${inUse}: use that one, or give a different address or port`;
  }
  if (ctx.strict && !canAuthenticate(spec)) {
    fields.authName =
      'strict mode only uses resolvers it can verify: give the name on its TLS certificate (or an SPKI pin), or switch to opportunistic mode in Settings';
  }
  return fields;
}

/**
 * Validates every field separately so a form can show each message beside
 * its field; with a context, also against the resolvers already listed and
 * the privacy mode.
 */
export function validateCustomResolver(raw: unknown, ctx?: ResolverContext): ResolverValidation {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, fields: { '(body)': 'send a JSON object: {"address": "…", "port": 853, "authName": "…", "pins": []}' }, codes: { '(body)': 'wrong_type' } };
  }
  const parsed = bodySchema().safeParse(raw);
  if (!parsed.success) return { ok: false, fields: issueFields(parsed.error.issues), codes: issueCodes(parsed.error.issues, raw) };
  const body = parsed.data;
  const fields: Record<string, string> = {};
  const addresses = body.address.split(',').map((a) => a.trim()).filter(Boolean);
  if (addresses.length === 0) fields.address = 'address is required: the resolver\'s IP address (several separated by commas)';
  else {
    try {
      customResolver({ address: addresses });
    } catch (err) {
      fields.address = messageOf(err);
    }
  }
  if (body.port !== undefined) {
    try {
      customResolver({ address: '127.0.0.1', port: body.port });
    } catch (err) {
      fields.port = messageOf(err);
    }
  }
  if (body.authName !== undefined && body.authName !== '') {
    try {
      validateAuthName(body.authName);
    } catch (err) {
      fields.authName = messageOf(err);
    }
  }
  (body.pins ?? []).forEach((pin, i) => {
    try {
      validatePin(pin);
    } catch (err) {
      fields[`pins.${i}`] ??= messageOf(err);
      fields.pins ??= messageOf(err);
    }
  });
  if (body.dohUrl !== undefined && body.dohUrl !== '') {
    try {
      validateDohUrl(body.dohUrl);
    } catch (err) {
      fields.dohUrl = messageOf(err);
    }
  }
  if (Object.keys(fields).length > 0) return { ok: false, fields, codes: addresses.length === 0 ? { address: 'required' } : {} };
  const spec = customResolver({
    address: addresses,
    port: body.port,
    authName: body.authName,
    pins: body.pins,
    dohUrl: body.dohUrl,
    label: body.label === '' ? undefined : body.label,
  });
  const conflicts = ctx ? contextFields(spec, ctx) : {};
  if (Object.keys(conflicts).length > 0) {
    const codes: Record<string, FieldCode> = {};
    if (conflicts.address !== undefined) codes.address = 'taken';
    if (conflicts.authName !== undefined) codes.authName = 'not_allowed';
    return { ok: false, fields: conflicts, codes };
  }
  return { ok: true, spec };
}

/** Can this resolver be used in strict mode (RFC 8310: an auth name or pins)? */
export function canAuthenticate(spec: ResolverSpec): boolean {
  return spec.authName !== undefined || spec.pins.length > 0;
}

/** A resolver as saved in resolvers.json (JSON's null for no auth name); the API's ResolverView adds the live fields. */
export type StoredResolver = Omit<ResolverSpec, 'authName' | 'dohUrl'> & {
  readonly authName: string | null;
  /** Absent in files from before DoH, and for resolvers without it. */
  readonly dohUrl?: string;
};

/** A saved choice of a retired preset was moved to its replacement (issue 29); said until the user dismisses it. */
export interface RetiredNotice {
  /** The retired preset's id, e.g. mullvad. */
  readonly from: string;
  /** The replacement's id, e.g. quad9. */
  readonly to: string;
  /** When the move was made, ms since the epoch. */
  readonly at: number;
}

interface ResolversFile {
  readonly active: string | null;
  readonly custom: readonly StoredResolver[];
  /** Written only while there is one, so other files stay readable by older versions. */
  readonly retiredNotice?: RetiredNotice;
  /** The resolver in use before the last switch ("Switch back to …", after a restart too); written only once there is one. */
  readonly previous?: string;
}

/** The file: the active resolver's ID and the custom resolvers, as stored. */
const resolversFileSchema = lazily((z) =>
  z.strictObject({
    active: z.string().max(128).nullable(),
    custom: z
      .array(
        z.strictObject({
          id: z.string().min(1).max(128),
          label: z.string().max(64),
          addresses: z.array(z.string()).min(1).max(16),
          port: z.int().min(1).max(65535),
          authName: z.string().max(253).nullable(),
          pins: z.array(z.string()).max(16),
          dohUrl: z.string().max(2048).optional(),
        }),
      )
      .max(MAX_CUSTOM_RESOLVERS),
    retiredNotice: z.strictObject({ from: z.string().max(128), to: z.string().max(128), at: z.number() }).optional(),
    previous: z.string().max(128).optional(),
  }),
);

/** A resolver as it is written to resolvers.json, and as the API shows it (control/resolver-view.ts adds what it measured). */
export function toStored(spec: ResolverSpec): StoredResolver {
  return {
    id: spec.id,
    label: spec.label,
    addresses: spec.addresses,
    port: spec.port,
    authName: spec.authName ?? null,
    pins: spec.pins,
    // Written only when set, so a file without DoH stays readable by older versions.
    ...(spec.dohUrl !== undefined ? { dohUrl: spec.dohUrl } : {}),
  };
}

function resolversFile(configDir: string): JsonConfigFile<ResolversFile> {
  return new JsonConfigFile<ResolversFile>(path.join(configDir, 'resolvers.json'), (raw) => {
    const r = resolversFileSchema().safeParse(raw);
    if (!r.success) {
      return invalidFields('resolvers file', issueFields(r.error.issues));
    }
    // Semantic checks (IP literals, names, pins) the same as for the API.
    const fields: Record<string, string> = {};
    r.data.custom.forEach((c, i) => {
      try {
        customResolver({ ...c, address: c.addresses, authName: c.authName ?? undefined });
      } catch (err) {
        fields[`custom.${i}`] = messageOf(err);
      }
    });
    if (Object.keys(fields).length > 0) return invalidFields('resolvers file', fields);
    return { ok: true, value: r.data };
  });
}

export class ResolverStore {
  readonly #file: JsonConfigFile<ResolversFile>;
  readonly #custom = new Map<string, ResolverSpec>();
  /** Resolvers given on the command line for this run: listed, never saved. */
  readonly #session = new Map<string, ResolverSpec>();
  #persistedActive: string | null = null;
  /** The resolver in use before the last switch, as saved. */
  #previous: string | null = null;
  /** The retired preset the file named as active, moved at load and not yet saved (settleRetired). */
  #retiring: RetiredPreset | null = null;
  #retiringAt = 0;
  #notice: RetiredNotice | null = null;

  constructor(configDir: string) {
    this.#file = resolversFile(configDir);
  }

  get path(): string {
    return this.#file.file;
  }

  /** What was wrong with the file at the last load, until a save replaces it. */
  get problem(): ConfigProblem | null {
    return this.#file.problem;
  }

  load(): void {
    const { value } = this.#file.load();
    this.#custom.clear();
    for (const c of value?.custom ?? []) {
      const spec = customResolver({ ...c, address: c.addresses, authName: c.authName ?? undefined });
      this.#custom.set(spec.id, spec);
    }
    this.#persistedActive = value?.active ?? null;
    this.#previous = value?.previous ?? null;
    this.#notice = value?.retiredNotice ?? null;
    // A retired preset's operator closed the service: the saved choice moves to the replacement it named.
    // Only in memory here (reading needs no write access); settleRetired() saves it, once.
    const retired = this.#persistedActive === null ? undefined : retiredPreset(this.#persistedActive);
    this.#retiring = retired ?? null;
    this.#retiringAt = Date.now();
    if (retired) this.#persistedActive = retired.replacement;
  }

  /** The retired preset the saved choice was moved from at this load, until settleRetired() saved the move. */
  get retiring(): RetiredPreset | null {
    return this.#retiring;
  }

  /** The move to say in the dashboard, saved or about to be; null once dismissed. */
  get retiredNotice(): RetiredNotice | null {
    return this.#notice ?? (this.#retiring ? { from: this.#retiring.id, to: this.#retiring.replacement, at: this.#retiringAt } : null);
  }

  /**
   * Saves the move made at load (the replacement as the active choice, and
   * the notice), so the next start neither repeats it nor forgets to say it.
   * Returns the retired preset it moved from; null when there was none.
   */
  async settleRetired(): Promise<RetiredPreset | null> {
    const retired = this.#retiring;
    if (!retired) return null;
    const notice = { from: retired.id, to: retired.replacement, at: this.#retiringAt };
    await this.#file.save({ active: retired.replacement, custom: [...this.#custom.values()].map(toStored), retiredNotice: notice, ...(this.#previous !== null ? { previous: this.#previous } : {}) });
    this.#notice = notice;
    this.#retiring = null;
    return retired;
  }

  /** The user read the notice: it is not shown again, after a restart either. */
  async dismissRetiredNotice(): Promise<void> {
    if (!this.#notice && !this.#retiring) return;
    const notice = this.#notice;
    this.#notice = null;
    try {
      await this.#save(this.#persistedActive);
    } catch (err) {
      this.#notice = notice;
      throw err;
    }
    this.#retiring = null;
  }

  /** The active resolver saved by the last switch, if it still exists. */
  get persistedActive(): ResolverSpec | undefined {
    return this.#persistedActive === null ? undefined : this.get(this.#persistedActive);
  }

  /** Lists a resolver the CLI picked for this run, unless it is already known. */
  addSession(spec: ResolverSpec): void {
    if (!this.get(spec.id)) this.#session.set(spec.id, spec);
  }

  get(id: string): ResolverSpec | undefined {
    return PRESETS[id] ?? this.#custom.get(id) ?? this.#session.get(id);
  }

  isPreset(id: string): boolean {
    return PRESETS[id] !== undefined;
  }

  isCustom(id: string): boolean {
    return this.#custom.has(id);
  }

  all(): ResolverSpec[] {
    return [...Object.values(PRESETS), ...this.#custom.values(), ...this.#session.values()];
  }

  get customCount(): number {
    return this.#custom.size;
  }

  async add(spec: ResolverSpec): Promise<void> {
    this.#custom.set(spec.id, spec);
    this.#session.delete(spec.id);
    try {
      await this.#save(this.#persistedActive);
    } catch (err) {
      this.#custom.delete(spec.id);
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    const spec = this.#custom.get(id);
    if (!spec) return;
    this.#custom.delete(id);
    try {
      await this.#save(this.#persistedActive);
    } catch (err) {
      this.#custom.set(id, spec);
      throw err;
    }
  }

  /**
   * The resolver in use before the last switch, saved with the choice, so
   * "Switch back to …" is offered after a restart too. Its ID as saved:
   * whether it is still listed is the caller's to check.
   */
  get previous(): string | null {
    return this.#previous;
  }

  /**
   * Saves the active choice, and `from` (the one in use until now) as the
   * one to switch back to; a command-line resolver becomes a saved custom
   * one so it survives restart.
   */
  async setActive(id: string, from?: string): Promise<void> {
    const session = this.#session.get(id);
    if (session) {
      this.#custom.set(id, session);
      this.#session.delete(id);
    }
    const previous = this.#previous;
    if (from !== undefined && from !== id) this.#previous = from;
    try {
      await this.#save(id);
    } catch (err) {
      this.#previous = previous;
      if (session) {
        this.#custom.delete(id);
        this.#session.set(id, session);
      }
      throw err;
    }
    this.#persistedActive = id;
  }

  async #save(active: string | null): Promise<void> {
    await this.#file.save({
      active,
      custom: [...this.#custom.values()].map(toStored),
      ...(this.#notice ? { retiredNotice: this.#notice } : {}),
      ...(this.#previous !== null ? { previous: this.#previous } : {}),
    });
  }
}
