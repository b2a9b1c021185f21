// What a PTY host the router starts inherits (docs/architecture.md, "PTY host"): the router's
// environment without its own settings. PTY_WS_* holds tokens, JWT secrets and database
// credentials, which a host (and every session it starts) must never see; the host needs PATH,
// HOME, locale and the like. Sessions get a clean environment of their own anyway. What the host
// is to know of the router's settings it is told as arguments (pty/wire/host-config.ts ptyHostArgs).

export function hostEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !name.startsWith('PTY_WS_')) out[name] = value;
  return out;
}
