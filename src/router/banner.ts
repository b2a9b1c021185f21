// What `npm start` and `deno task start` print once the router listens: its URLs and how to authenticate.
import type { Config } from '../core/config.ts';
import type { SessionRecord } from '../ports/store.ts';

export interface Listening {
  /** http://host:port, or https:// when serving TLS */
  origin: string;
  /** The dev token made at this start (null when auth is off, tokens come from config, or an earlier start's is kept). */
  devToken: string | null;
  /** The dev token of an earlier start is kept: it works, but only its hash is here to show. */
  devTokenKept?: boolean;
  /** The session `start` made (null for `serve`). */
  defaultSession: SessionRecord | null;
}

export function banner(s: Listening, config: Config): string {
  const instanceId = config.instanceId;
  // The URLs to hand out are the public ones when the operator named them (PTY_WS_PUBLIC_URL).
  const origin = config.publicUrl ?? s.origin;
  const ws = origin.replace(/^http/, 'ws');
  const lines = [`pty-ws listening on ${s.origin}`];
  // Opens the default session straight away (a page without a session shows the list).
  const fragment = [s.devToken ? `token=${s.devToken}` : '', s.defaultSession ? `session=${s.defaultSession.id}` : ''].filter(Boolean).join('&');
  lines.push(`  web page:    ${origin}/${fragment ? `#${fragment}` : ''}`);
  if (s.defaultSession) lines.push(`  attach URL:  ${ws}/agents/${instanceId}/sessions/${s.defaultSession.id}/attach`);
  lines.push(`  sessions:    ${origin}/agents/${instanceId}/sessions`);
  // No "dev token:" label when it is kept: scripts that read the token from that line must not read a sentence.
  if (s.devToken) lines.push(`  dev token:   ${s.devToken}`, `               (scope pty:control; printed once, only its hash is kept; ${config.devTokenPolicy === 'keep' ? 'it survives restarts; `pty-ws token` makes a new one' : 'a new one each start'})`);
  else if (s.devTokenKept) lines.push('  auth:        the dev token printed at an earlier start still works (only its hash is kept);', '               `pty-ws token` makes a new one and prints it');
  else if (!config.auth) lines.push('  auth:        off (PTY_WS_AUTH=off): anyone who can reach this port can type into its sessions');
  else lines.push(`  auth:        bearer tokens from ${[config.tokensFile !== undefined ? 'PTY_WS_TOKENS_FILE' : '', (config.jwtSecret ?? config.jwtPublicKey ?? config.jwksUrl) !== undefined ? 'JWT' : ''].filter(Boolean).join(' and ')}`);
  return `${lines.join('\n')}\n`;
}
