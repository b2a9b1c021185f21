// The REST control plane from the client side (docs/protocol.md §10): list, create, inspect and
// end sessions, and read recordings. Uses the runtime's fetch; the bearer goes in Authorization.
import * as v from 'valibot';
import { FleetSessionList, InstanceList, type FleetSessionInfo, type InstanceInfo } from '../protocol/fleet-info.ts';
import { bytesToBase64 } from '../core/ids.ts';
import { RestErrorBody, SessionInfo, SessionList } from '../protocol/session-info.ts';
import { MintedShare, ShareList, SharesRevoked, type ShareInfo } from '../protocol/share-info.ts';
import { HostList, MintedHostToken, type HostInfo } from '../protocol/host-info.ts';

export type { FleetSessionInfo, InstanceInfo, MintedShare, SessionInfo, ShareInfo };

export interface MintShareBody {
  scope?: 'pty:observe' | 'pty:control';
  expires_in?: number;
  label?: string;
}

export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RestError';
  }
}

export interface CreateSessionBody {
  command?: string;
  argv?: string[];
  cwd?: string;
  env?: Record<string, string>;
  label?: string;
  terminal_size?: { cols: number; rows: number };
  session_backend?: string;
  session_class?: string;
  /** The remote PTY host to place it on (docs/remote-hosts.md). */
  host?: string;
}

export class SessionsApi {
  /** `http(s)://host[:port]/agents/{instance_id}/sessions` */
  readonly sessionsUrl: string;
  private readonly origin: string;

  constructor(private readonly opts: { origin: string; instanceId: string; token?: string | null; fetch?: typeof fetch }) {
    this.origin = opts.origin.replace(/\/+$/, '');
    this.sessionsUrl = `${this.origin}/agents/${encodeURIComponent(opts.instanceId)}/sessions`;
  }

  async list(): Promise<SessionInfo[]> {
    return (await this.call('GET', '', SessionList)).sessions;
  }

  /** Every session of every instance sharing the server's database (GET /sessions), each with its owner's attach URL and whether it is reachable. */
  async listFleet(): Promise<FleetSessionInfo[]> {
    return (await this.call('GET', '', FleetSessionList, undefined, `${this.origin}/sessions`)).sessions;
  }

  /** The instances sharing the server's database (GET /instances). */
  async listInstances(): Promise<InstanceInfo[]> {
    return (await this.call('GET', '', InstanceList, undefined, `${this.origin}/instances`)).instances;
  }

  get(sessionId: string): Promise<SessionInfo> {
    return this.call('GET', `/${encodeURIComponent(sessionId)}`, SessionInfo);
  }

  create(body: CreateSessionBody = {}): Promise<SessionInfo> {
    return this.call('POST', '', SessionInfo, body);
  }

  delete(sessionId: string): Promise<{ session_id: string; terminated: boolean; state: string }> {
    return this.call('DELETE', `/${encodeURIComponent(sessionId)}`, v.object({ session_id: v.string(), terminated: v.boolean(), state: v.string() }));
  }

  /** Mints a share link of the session (docs/sharing.md); the answer holds its only copy of the token. */
  mintShare(sessionId: string, body: MintShareBody = {}): Promise<MintedShare> {
    return this.call('POST', `/${encodeURIComponent(sessionId)}/shares`, MintedShare, body);
  }

  async listShares(sessionId: string): Promise<ShareInfo[]> {
    return (await this.call('GET', `/${encodeURIComponent(sessionId)}/shares`, ShareList)).shares;
  }

  /** Revokes a share: its connections close (4401) and its token stops working. */
  async revokeShare(sessionId: string, shareId: string): Promise<void> {
    const res = await this.fetch('DELETE', `/${encodeURIComponent(sessionId)}/shares/${encodeURIComponent(shareId)}`);
    if (!res.ok) throw await restError(res);
  }

  /**
   * Revokes every active share of this instance the caller minted, or `principal` minted (that
   * needs pty:admin); resolves with how many (docs/sharing.md).
   */
  async revokeSharesOf(principal?: string): Promise<number> {
    const query = principal === undefined ? '' : `?${new URLSearchParams({ principal }).toString()}`;
    return (await this.call('DELETE', query, SharesRevoked, undefined, `${this.origin}/agents/${encodeURIComponent(this.opts.instanceId)}/shares`)).revoked;
  }

  /** The session's retained log as an asciicast v2 stream (the caller reads the body). */
  async recording(sessionId: string): Promise<Response> {
    const res = await this.fetch('GET', `/${encodeURIComponent(sessionId)}/recording.cast`);
    if (!res.ok) throw await restError(res);
    return res;
  }

  /** Puts a file into the session's working directory (routes/files.ts); never replaces one. */
  uploadFile(sessionId: string, name: string, bytes: Uint8Array): Promise<{ name: string; directory: string; bytes: number }> {
    return this.call('POST', `/${encodeURIComponent(sessionId)}/files`, v.object({ name: v.string(), directory: v.string(), bytes: v.number() }), { name, content_base64: bytesToBase64(bytes) });
  }

  /** A file of the session's working directory, as the response (its body is the bytes). */
  async downloadFile(sessionId: string, name: string): Promise<Response> {
    const res = await this.fetch('GET', `/${encodeURIComponent(sessionId)}/files/${encodeURIComponent(name)}`);
    if (!res.ok) throw await restError(res);
    return res;
  }

  /** Mints the named remote PTY host's credential (pty:admin; docs/remote-hosts.md): the answer holds its only copy. */
  mintHostToken(name: string): Promise<MintedHostToken> {
    return this.call('POST', `/${encodeURIComponent(name)}/token`, MintedHostToken, {}, this.hostsUrl);
  }

  /** The remote PTY hosts with a credential here, and whether each is linked. */
  async listHosts(): Promise<HostInfo[]> {
    return (await this.call('GET', '', HostList, undefined, this.hostsUrl)).hosts;
  }

  private get hostsUrl(): string {
    return `${this.origin}/agents/${encodeURIComponent(this.opts.instanceId)}/hosts`;
  }

  /** The WebSocket attach URL of a session on the same origin. */
  attachUrl(sessionId: string): string {
    return `${this.sessionsUrl.replace(/^http/, 'ws')}/${encodeURIComponent(sessionId)}/attach`;
  }

  private async call<T extends v.GenericSchema>(method: string, path: string, schema: T, body?: unknown, base = this.sessionsUrl): Promise<v.InferOutput<T>> {
    const res = await this.fetch(method, path, body, base);
    if (!res.ok) throw await restError(res);
    const parsed = v.safeParse(schema, await res.json());
    if (!parsed.success) throw new RestError(res.status, 'bad_response', `${method} ${base}${path}: unexpected response shape`);
    return parsed.output;
  }

  private fetch(method: string, path: string, body?: unknown, base = this.sessionsUrl): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const f = this.opts.fetch ?? fetch;
    return f(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  }
}

async function restError(res: Response): Promise<RestError> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const parsed = v.safeParse(RestErrorBody, body);
  return parsed.success
    ? new RestError(res.status, parsed.output.error.code, `HTTP ${res.status} ${parsed.output.error.code}: ${parsed.output.error.message}`)
    : new RestError(res.status, 'http_error', `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}
