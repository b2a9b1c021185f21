// Which remote addresses count as one client for per-address limits (docs/security.md, attack 8):
// an IPv4 address (also written IPv4-mapped, as a dual-stack listener reports it), or an IPv6 /64,
// since one host or LAN is routinely handed a whole /64 and could otherwise take a fresh address
// for every connection.

const IPV4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The key a per-address limit counts under; text that is no IP address is its own key. */
export function addressGroup(address: string): string {
  const v4 = IPV4.exec(address);
  if (v4) return v4[1]!;
  const hextets = expandIpv6(address.split('%')[0]!);
  return hextets ? `${hextets.slice(0, 4).join(':')}::/64` : address;
}

/** The eight hextets of an IPv6 address (an embedded IPv4 tail counts as two), or undefined. */
function expandIpv6(address: string): string[] | undefined {
  const halves = address.toLowerCase().split('::');
  if (halves.length > 2) return undefined;
  const parts = halves.map((h) => (h === '' ? [] : h.split(':')));
  const width = (list: string[]) => list.reduce((n, p) => n + (p.includes('.') ? 2 : 1), 0);
  const missing = 8 - parts.reduce((n, list) => n + width(list), 0);
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = halves.length === 1 ? parts[0]! : [...parts[0]!, ...Array<string>(missing).fill('0'), ...parts[1]!];
  const head = all.slice(0, 4);
  return head.every((h) => /^[0-9a-f]{1,4}$/.test(h)) ? [...head.map((h) => parseInt(h, 16).toString(16)), ...all.slice(4)] : undefined;
}
