/**
 * Reaching the installed service's control socket: where it is, whether
 * the service is installed, and what a failed connect means for the user
 * (not installed / not running / not allowed), in sentences that say what
 * to do. Shared by `dotstub ctl` and the desktop app.
 *
 * The authorization model (docs/rights.md, "Who may control dotstub"): the socket
 * is _dotstub:dotstub 0660 (the proxy runs as _dotstub), so the kernel lets root and the `dotstub` group's
 * members connect, and nobody else; whoever may connect may use the API.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';

/** Where the service (packaging/dotstub.service) serves the control API for local clients. */
export const DEFAULT_CONTROL_SOCKET = '/run/dotstub/control.sock';
/** The group the package creates; its members may control the service. */
const CONTROL_GROUP = 'dotstub';
/** Where an installed dotstub.service's unit file lives (the package's, or an administrator's copy). */
const SERVICE_UNIT_FILES: readonly string[] = ['/lib/systemd/system/dotstub.service', '/usr/lib/systemd/system/dotstub.service', '/etc/systemd/system/dotstub.service'];

/** The command that turns the service on (once, as an administrator). */
const TURN_ON_COMMAND = 'sudo systemctl enable --now dotstub';

export type SocketProblemKind = 'not-installed' | 'not-running' | 'denied' | 'failed';

/** A control-socket connect that failed, with a sentence that says what to do. */
export class SocketAccessError extends Error {
  override readonly name = 'SocketAccessError';
  readonly kind: SocketProblemKind;
  /** The short version for a menu line: "you are not in the dotstub group". */
  readonly short: string;
  /** What to do, as a command or a step ("sudo adduser alice dotstub, then log in again"); '' when nothing is known. */
  readonly hint: string;
  constructor(kind: SocketProblemKind, message: string, options?: ErrorOptions & { short?: string; hint?: string }) {
    super(message, options);
    this.kind = kind;
    this.short = options?.short ?? message;
    this.hint = options?.hint ?? '';
  }
}

export interface SocketPlace {
  readonly socketPath: string;
  /** Unit files whose presence means "installed" (tests point these at temp files). */
  readonly unitFiles?: readonly string[];
  /** The group file to tell "not in the group" from "in it, but not in this session" (default /etc/group). */
  readonly groupFile?: string;
}

/** Is the dotstub service installed on this machine (its unit file, or its socket)? */
export function serviceInstalled(place: SocketPlace): boolean {
  return (place.unitFiles ?? SERVICE_UNIT_FILES).some((f) => fs.existsSync(f)) || fs.existsSync(place.socketPath);
}

/** Is `user` listed as a member of `group` in the group file (supplementary membership, as adduser makes it)? */
function listedInGroup(user: string, group: string, groupFile: string): boolean {
  try {
    for (const line of fs.readFileSync(groupFile, 'utf8').split('\n')) {
      const [name, , , members] = line.split(':');
      if (name === group) return (members ?? '').split(',').includes(user);
    }
  } catch {
    // unreadable: treated as not listed
  }
  return false;
}

/** Turns a connect error on the control socket into what the user should do. */
export function explainSocketError(err: unknown, place: SocketPlace): SocketAccessError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = place.socketPath;
  if (code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTDIR') {
    if (!serviceInstalled(place)) {
      return new SocketAccessError('not-installed', `the dotstub service is not installed on this machine (no ${where}): install the dotstub package (sudo apt install ./dotstub_*.deb), or run dotstub by hand`, {
        cause: err,
        short: 'the dotstub service is not installed',
        hint: 'sudo apt install ./dotstub_*.deb',
      });
    }
    return new SocketAccessError('not-running', `the dotstub service is not running (nothing at ${where}): turn it on with "${TURN_ON_COMMAND}", or with "Turn on private DNS" in the dotstub app (it asks for an administrator's password once)`, {
      cause: err,
      short: 'the dotstub service is not running',
      hint: TURN_ON_COMMAND,
    });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    const user = os.userInfo().username;
    if (listedInGroup(user, CONTROL_GROUP, place.groupFile ?? '/etc/group')) {
      return new SocketAccessError('denied', `permission denied on ${where}: you were added to the ${CONTROL_GROUP} group after this session started; log out and in again (or run: newgrp ${CONTROL_GROUP})`, {
        cause: err,
        short: `your ${CONTROL_GROUP} group counts from your next login`,
        hint: 'log out and in again',
      });
    }
    return new SocketAccessError('denied', `permission denied on ${where}: you are not in the ${CONTROL_GROUP} group; an administrator adds you with "sudo adduser ${user} ${CONTROL_GROUP}", then log out and in again`, {
      cause: err,
      short: `you are not in the ${CONTROL_GROUP} group`,
      hint: `sudo adduser ${user} ${CONTROL_GROUP}, then log in again`,
    });
  }
  return new SocketAccessError('failed', `cannot reach the dotstub service at ${where}: ${(err as Error | undefined)?.message ?? String(err)}`, { cause: err });
}

export interface SocketAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** One JSON call on the control socket; connect failures become SocketAccessError. */
export function socketRequest(place: SocketPlace, method: 'GET' | 'PUT' | 'POST' | 'DELETE', pathname: string, body?: unknown, timeoutMs = 10_000): Promise<SocketAnswer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      {
        socketPath: place.socketPath,
        path: pathname,
        method,
        agent: false,
        headers: { Accept: 'application/json', ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}) },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            // not JSON: the text as it is
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new SocketAccessError('failed', `the dotstub service at ${place.socketPath} did not answer ${method} ${pathname} within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(err instanceof SocketAccessError || answered ? err : explainSocketError(err, place)));
    req.end(payload);
  });
}
