/**
 * A DNSSEC-signed lab zone for Debian's unbound to validate (its answers
 * then carry AD): `signed.example` with a KSK and a ZSK made by ldnsutils'
 * ldns-keygen and signed by ldns-signzone, and the unbound lines that serve
 * it to unbound's own iterator (auth-zone for-upstream) with the KSK's DS as
 * the trust anchor, so unbound validates it as it would any signed zone, and
 * asks nobody off this machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const SIGNED_ZONE = 'signed.example';
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

/** Signs the zone in `dir`; returns unbound's extra configuration lines (extraConfig) that serve and validate it. */
export function signedZoneConfig(dir: string): string[] {
  const zoneFile = path.join(dir, `${SIGNED_ZONE}.zone`);
  fs.writeFileSync(
    zoneFile,
    [
      `$ORIGIN ${SIGNED_ZONE}.`,
      '$TTL 300',
      `@ IN SOA ns.${SIGNED_ZONE}. admin.${SIGNED_ZONE}. 1 3600 600 86400 300`,
      `@ IN NS ns.${SIGNED_ZONE}.`,
      'ns IN A 192.0.2.1',
      `www IN A ${SIGNED_ADDRESS}`,
      '',
    ].join('\n'),
  );
  const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { cwd: dir, encoding: 'utf8' }).trim();
  const ksk = run('/usr/bin/ldns-keygen', ['-a', 'ED25519', '-k', SIGNED_ZONE]);
  const zsk = run('/usr/bin/ldns-keygen', ['-a', 'ED25519', SIGNED_ZONE]);
  // Expiry within 2036: ldns-signzone's timestamps wrap past 2106 and unbound refuses what it then writes for 2099.
  run('/usr/bin/ldns-signzone', ['-e', '20361231000000', zoneFile, ksk, zsk]);
  return [
    '  module-config: "validator iterator"',
    `  trust-anchor-file: "${path.join(dir, `${ksk}.ds`)}"`,
    // The test zones answer everything else NXDOMAIN from a static root; this one is resolved (and validated) as any other.
    `  local-zone: "${SIGNED_ZONE}." transparent`,
    'auth-zone:',
    `  name: "${SIGNED_ZONE}"`,
    `  zonefile: "${zoneFile}.signed"`,
    '  for-upstream: yes',
    '  for-downstream: no',
    '  fallback-enabled: no',
  ];
}
