/**
 * DNSSEC-signed lab zones for Debian's unbound to validate (its answers
 * then carry AD, or SERVFAIL for the forged one): `signed.example` and
 * `bogus.example`, each with a KSK and a ZSK made by ldnsutils'
 * ldns-keygen and signed by ldns-signzone, and the unbound lines that serve
 * it to unbound's own iterator (auth-zone for-upstream) with the KSK's DS as
 * the trust anchor, so unbound validates it as it would any signed zone, and
 * asks nobody off this machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const SIGNED_ZONE = 'signed.example';
/** The zone's one name with an address. */
export const SIGNED_NAME = `www.${SIGNED_ZONE}`;
export const SIGNED_ADDRESS = '192.0.2.53';

/** Why signed-zone tests can't run here, or null when they can. */
export function signedZoneMissing(): string | null {
  for (const tool of ['/usr/bin/ldns-keygen', '/usr/bin/ldns-signzone']) {
    if (!fs.existsSync(tool)) return `${tool} is missing (Debian package ldnsutils; .ci/run installs it)`;
  }
  return null;
}

/** A name whose zone is signed, but whose address was changed after signing: a validating resolver answers SERVFAIL. */
export const BOGUS_NAME = 'www.bogus.example';

/** More records for the lab zones, e.g. a host's address and its SSHFP records (`ssh-keygen -r host`). */
export interface ZoneExtras {
  /** Zone-file lines for SIGNED_ZONE, names relative to it (`host IN A 10.99.0.1`). */
  readonly signed?: readonly string[];
  /** Zone-file lines for bogus.example, signed as they are. */
  readonly bogus?: readonly string[];
  /** Then, in bogus.example's signed file, each `from` replaced by `to` (case ignored): its signatures no longer match. */
  readonly bogusForgeries?: readonly { readonly from: string; readonly to: string }[];
}

/** Writes and signs `zone` in `dir` (its `www` at `address`, and `extra` lines); returns the DS file of its KSK and the signed zone file. */
function signZone(dir: string, zone: string, address: string, extra: readonly string[] = []): { readonly ds: string; readonly signed: string } {
  const zoneFile = path.join(dir, `${zone}.zone`);
  fs.writeFileSync(
    zoneFile,
    [`$ORIGIN ${zone}.`, '$TTL 300', `@ IN SOA ns.${zone}. admin.${zone}. 1 3600 600 86400 300`, `@ IN NS ns.${zone}.`, 'ns IN A 192.0.2.1', `www IN A ${address}`, ...extra, ''].join('\n'),
  );
  const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { cwd: dir, encoding: 'utf8' }).trim();
  const ksk = run('/usr/bin/ldns-keygen', ['-a', 'ED25519', '-k', zone]);
  const zsk = run('/usr/bin/ldns-keygen', ['-a', 'ED25519', zone]);
  // Expiry within 2036: ldns-signzone's timestamps wrap past 2106 and unbound refuses what it then writes for 2099.
  run('/usr/bin/ldns-signzone', ['-e', '20361231000000', zoneFile, ksk, zsk]);
  return { ds: path.join(dir, `${ksk}.ds`), signed: `${zoneFile}.signed` };
}

/**
 * Signs the lab zones in `dir` (SIGNED_ZONE, and bogus.example with its
 * address forged after signing), with `extras` in them; returns unbound's
 * extra configuration lines (extraConfig) that serve them to its iterator
 * and, unless `validate` is false, validate them.
 */
export function signedZoneConfig(dir: string, validate = true, extras: ZoneExtras = {}): string[] {
  const good = signZone(dir, SIGNED_ZONE, SIGNED_ADDRESS, extras.signed);
  const bogus = signZone(dir, 'bogus.example', '192.0.2.66', extras.bogus);
  let forged = fs.readFileSync(bogus.signed, 'utf8').replace(/^(www\.bogus\.example\.\s+\d+\s+IN\s+A\s+)192\.0\.2\.66$/m, '$1192.0.2.99');
  if (!forged.includes('192.0.2.99')) throw new Error('could not forge the bogus zone');
  for (const { from, to } of extras.bogusForgeries ?? []) {
    if (!forged.toLowerCase().includes(from.toLowerCase())) throw new Error(`could not forge the bogus zone: no "${from}" in it`);
    forged = forged.replace(new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), to);
  }
  fs.writeFileSync(bogus.signed, forged);
  const zone = (name: string, file: string): string[] => [
    // The test zones answer everything else NXDOMAIN from a static root; these are resolved (and validated) as any other.
    'auth-zone:',
    `  name: "${name}"`,
    `  zonefile: "${file}"`,
    '  for-upstream: yes',
    '  for-downstream: no',
    '  fallback-enabled: no',
  ];
  return [
    `  module-config: "${validate ? 'validator iterator' : 'iterator'}"`,
    ...(validate ? [`  trust-anchor-file: "${good.ds}"`, `  trust-anchor-file: "${bogus.ds}"`] : []),
    `  local-zone: "${SIGNED_ZONE}." transparent`,
    '  local-zone: "bogus.example." transparent',
    ...zone(SIGNED_ZONE, good.signed),
    ...zone('bogus.example', bogus.signed),
  ];
}
