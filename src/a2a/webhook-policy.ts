// Which webhooks this server sends to (docs/security.md, "Push notifications"): https only (http
// only to loopback, where the operator allows it), and no loopback, private, link-local or other
// special-purpose address unless PTY_WS_PUSH_ALLOW_HOSTS names it or the host. Checked on every
// address the host resolves to, at registration and again before every delivery; the delivery
// then connects to the address checked (src/a2a/push-sender.ts), so a name that resolves
// differently in between (DNS rebinding) cannot lead it elsewhere.
import { addressKind, inCidr, parseCidr, parseIp, type IpBytes } from './ip-ranges.ts';

/** Longest webhook URL accepted. */
const MAX_URL = 2048;

export interface WebhookPolicySettings {
  /** PTY_WS_PUSH_ALLOW_HOSTS: host names, addresses and CIDR ranges a webhook may reach though they are not public. */
  pushAllowHosts: readonly string[];
  /** PTY_WS_PUSH_ALLOW_HTTP_LOOPBACK: plain http:// to a loopback address (a local receiver). */
  pushAllowHttpLoopback: boolean;
}

export class WebhookPolicy {
  private readonly names: ReadonlySet<string>;
  private readonly ranges: ReadonlyArray<{ base: IpBytes; bits: number }>;

  constructor(private readonly settings: WebhookPolicySettings) {
    const ranges: Array<{ base: IpBytes; bits: number }> = [];
    const names = new Set<string>();
    for (const entry of settings.pushAllowHosts) {
      const cidr = parseCidr(entry);
      if (cidr) ranges.push(cidr);
      else names.add(hostKey(entry));
    }
    this.names = names;
    this.ranges = ranges;
  }

  /** The URL as a webhook, or why it cannot be one (before any name is resolved). */
  url(raw: string): URL | string {
    if (raw.length > MAX_URL) return `the webhook URL is longer than ${MAX_URL} characters`;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'the webhook URL is not an absolute URL';
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return `the webhook URL must be https:// (got ${url.protocol})`;
    if (url.username || url.password) return 'the webhook URL must not carry a user name or password: use token or authentication';
    if (url.protocol === 'http:') {
      const ip = parseIp(url.hostname);
      const loopback = url.hostname === 'localhost' || (ip !== null && addressKind(ip) === 'loopback');
      if (!loopback || !this.settings.pushAllowHttpLoopback) return 'the webhook URL must be https:// (plain http:// only to a loopback address, with PTY_WS_PUSH_ALLOW_HTTP_LOOPBACK=1)';
    }
    return url;
  }

  /** Null when every address `url`'s host resolved to may be reached, else why not. */
  addresses(url: URL, addresses: readonly string[]): string | null {
    if (addresses.length === 0) return `${url.hostname} resolves to no address`;
    const namedHost = this.names.has(hostKey(url.hostname));
    for (const address of addresses) {
      const ip = parseIp(address);
      if (!ip) return `${url.hostname} resolves to ${address}, which is not an IP address`;
      const kind = addressKind(ip);
      if (url.protocol === 'http:' && kind !== 'loopback') return `plain http:// goes only to loopback addresses, and ${url.hostname} resolves to ${address}`;
      if (kind === 'public' || namedHost || this.ranges.some((r) => inCidr(ip, r))) continue;
      return `${url.hostname} resolves to ${address}, a ${kind} address, which webhooks may reach only when PTY_WS_PUSH_ALLOW_HOSTS names it`;
    }
    return null;
  }
}

/** A host name as compared: lower case, without brackets or a trailing dot. */
function hostKey(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}
