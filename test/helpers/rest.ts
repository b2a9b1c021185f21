// The REST session routes as a test drives them.
import { expect } from 'vitest';

export interface SessionView {
  session_id: string;
  attach_url: string;
  session_backend: string;
  session_class: string;
  state: string;
  close_reason: string | null;
  exit_code: number | null;
  current_sequence?: number;
  skipped_sequences?: number;
  pty_host?: string;
}

export class Rest {
  constructor(
    readonly origin: string,
    readonly token: string | null,
    readonly instance = 'local',
  ) {}

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const res = await fetch(`${this.origin}/agents/${this.instance}/sessions${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  async create(body: Record<string, unknown> = {}): Promise<SessionView> {
    const r = await this.request('POST', '', body);
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    return r.json as unknown as SessionView;
  }

  async get(id: string): Promise<SessionView> {
    const r = await this.request('GET', `/${id}`);
    expect(r.status).toBe(200);
    return r.json as unknown as SessionView;
  }

  async delete(id: string): Promise<number> {
    return (await this.request('DELETE', `/${id}`)).status;
  }
}
