/**
 * NetworkManager managing /etc/resolv.conf itself (no resolved): it rewrites
 * the file on every connect, so first tell it to keep out (`dns=none`,
 * `rc-manager=unmanaged`), reload it, then write resolv.conf as the plain
 * backend does. Restore puts the file back, removes the conf and reloads,
 * after which NetworkManager manages resolv.conf again as before.
 */
import type { Backend, Detection, Target } from './backend.js';
import { fileState, readState } from './file-state.js';
import type { SystemHost } from './host.js';
import { describeResolvConf, readResolvText, resolvConfLeaks, resolvConfStep } from './resolv-conf-backend.js';
import { resolvConfMode } from './resolved-backend.js';
import { parseResolvConf, STUB_ADDRESSES } from './resolv-conf.js';
import type { Step } from './steps.js';

export const NM_CONF = '/etc/NetworkManager/conf.d/90-dotstub.conf';
export const NM_CONF_TEXT = '# Written by dotstub: NetworkManager leaves DNS to dotstub.\n[main]\ndns=none\nrc-manager=unmanaged\n';

export class NetworkManagerBackend implements Backend {
  readonly name = 'networkmanager' as const;
  readonly #host: SystemHost;

  constructor(host: SystemHost) {
    this.#host = host;
  }

  async #running(): Promise<boolean> {
    const r = await this.#host.run(['nmcli', '-t', '-f', 'RUNNING', 'general'], 5000);
    return r.code === 0 && r.stdout.trim() === 'running';
  }

  async detect(): Promise<Detection> {
    if (!(await this.#running())) return { usable: false, why: 'NetworkManager is not running (nmcli says so, or is not installed)' };
    if (resolvConfMode(this.#host) === 'stub') return { usable: false, why: 'NetworkManager is running, but DNS goes through systemd-resolved' };
    return { usable: true, why: `NetworkManager is running and ${describeResolvConf(this.#host)}, without resolved` };
  }

  async describeCurrent(): Promise<string[]> {
    return [describeResolvConf(this.#host), readState(this.#host.at(NM_CONF)).type === 'absent' ? `no ${NM_CONF}` : `${NM_CONF} exists`];
  }

  async plan(target: Target): Promise<Step[]> {
    const resolv = resolvConfStep(this.#host, target, this.name);
    const conf = this.#host.at(NM_CONF);
    return [
      { kind: 'file', path: conf, before: readState(conf), after: fileState(NM_CONF_TEXT), why: 'keep NetworkManager from rewriting resolv.conf on reconnect' },
      { kind: 'reload', target: 'NetworkManager', why: 'make NetworkManager read it' },
      resolv,
    ];
  }

  async inForce(_target: Target): Promise<{ inForce: boolean; why: string }> {
    const text = readResolvText(this.#host);
    const servers = text === undefined ? [] : parseResolvConf(text).nameservers;
    if (readState(this.#host.at(NM_CONF)).type === 'absent') return { inForce: false, why: `${NM_CONF} is missing: NetworkManager may rewrite resolv.conf` };
    const ours = servers.length > 0 && servers.every((s) => STUB_ADDRESSES.has(s));
    return { inForce: ours, why: ours ? 'resolv.conf names only dotstub and NetworkManager keeps out' : `resolv.conf names ${servers.join(', ') || 'no nameserver'}` };
  }

  async leaks(_target: Target): Promise<string[]> {
    return resolvConfLeaks(this.#host);
  }
}
