/**
 * The proxy's ready file (`dotstub --ready-file FILE`): written atomically
 * (mode 0600) once DNS and the control API listen, removed on a clean stop.
 *
 *   {"dns":[{"host":"127.0.0.1","port":53}],"control":"http://127.0.0.1:PORT","token":"…","pid":N}
 *
 * `control` and `token` are null when the proxy runs with --no-control; the
 * app always starts it with a control API, so it requires both.
 */
export interface ReadyInfo {
  readonly dns: readonly { readonly host: string; readonly port: number }[];
  readonly control: string;
  readonly token: string;
  readonly pid: number;
  /** The installed service's control socket, when this is the service (not a proxy this app started). */
  readonly socket?: string;
  /** The dashboard's link (the service's, from its socket). */
  readonly dashboard?: string;
}

class ReadyFileError extends Error {
  readonly code = 'ready_file_invalid';
  override readonly name = 'ReadyFileError';
}

function isPort(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 65536;
}

/** Parses and checks a ready file's text; throws ReadyFileError naming the bad field. */
export function parseReadyFile(text: string): ReadyInfo {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReadyFileError('ready file is not JSON', { cause: err });
  }
  if (typeof value !== 'object' || value === null) throw new ReadyFileError('ready file is not a JSON object');
  const v = value as Record<string, unknown>;
  if (!Array.isArray(v.dns) || !v.dns.every((d: unknown) => typeof d === 'object' && d !== null && typeof (d as { host?: unknown }).host === 'string' && isPort((d as { port?: unknown }).port))) {
    throw new ReadyFileError('ready file: "dns" must be a list of {host, port}');
  }
  if (typeof v.control !== 'string' || !/^http:\/\/(127\.\d+\.\d+\.\d+|\[::1\]):\d{1,5}$/.test(v.control)) {
    throw new ReadyFileError('ready file: "control" must be the control API URL (start the proxy with --control, not --no-control)');
  }
  if (typeof v.token !== 'string' || v.token === '') throw new ReadyFileError('ready file: "token" is missing');
  if (typeof v.pid !== 'number' || !Number.isInteger(v.pid) || v.pid <= 0) throw new ReadyFileError('ready file: "pid" must be a process id');
  return {
    dns: (v.dns as { host: string; port: number }[]).map((d) => ({ host: d.host, port: d.port })),
    control: v.control,
    token: v.token,
    pid: v.pid,
  };
}
