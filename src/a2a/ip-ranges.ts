// IP addresses as bytes, and the ranges a webhook must not reach unless an operator names them
// (docs/security.md, "Push notifications"): loopback, private, link-local and the other
// special-purpose blocks of the IANA registries, checked on every address a name resolves to.
// Portable: no node:net.

/** An address as 4 (IPv4) or 16 (IPv6) bytes; an IPv4-mapped IPv6 address is its IPv4 one. */
export type IpBytes = Uint8Array;

export type AddressKind = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

/** A dotted-quad IPv4 or an IPv6 address (with or without [brackets]); null for anything else, zone ids included. */
export function parseIp(text: string): IpBytes | null {
  const s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = parseV4(s);
  if (v4) return v4;
  const v6 = parseV6(s);
  if (!v6) return null;
  // ::ffff:a.b.c.d reaches the IPv4 address: judged as one.
  return isPrefix(v6, MAPPED, 96) ? v6.slice(12) : v6;
}

function parseV4(s: string): IpBytes | null {
  const parts = s.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return null;
  return new Uint8Array(parts.map(Number));
}

function parseV6(s: string): IpBytes | null {
  // A dotted IPv4 tail (::ffff:1.2.3.4) is its two last groups.
  let text = s;
  if (s.includes('.')) {
    const at = s.lastIndexOf(':');
    const v4 = parseV4(s.slice(at + 1));
    if (at < 0 || !v4) return null;
    text = `${s.slice(0, at + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  if (![...left, ...right].every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  const fill = 8 - left.length - right.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null;
  const words = [...left, ...new Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...right].map((g) => parseInt(g, 16));
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

/** `a.b.c.d/n` or `x::y/n`; a bare address is its own /32 or /128. Null when it is neither. */
export function parseCidr(text: string): { base: IpBytes; bits: number } | null {
  const [addr, len, extra] = text.split('/');
  if (extra !== undefined || addr === undefined) return null;
  const base = parseIp(addr);
  if (!base) return null;
  const max = base.length * 8;
  if (len === undefined) return { base, bits: max };
  if (!/^\d{1,3}$/.test(len) || Number(len) > max) return null;
  return { base, bits: Number(len) };
}

export function inCidr(ip: IpBytes, cidr: { base: IpBytes; bits: number }): boolean {
  return ip.length === cidr.base.length && isPrefix(ip, cidr.base, cidr.bits);
}

function isPrefix(ip: IpBytes, base: IpBytes, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> i % 8;
    if ((ip[i >> 3]! & mask) !== (base[i >> 3]! & mask)) return false;
  }
  return true;
}

const MAPPED = new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0]);

/** The special-purpose blocks, most specific first where they nest. */
const RANGES: Array<[string, Exclude<AddressKind, 'public'>]> = [
  ['127.0.0.0/8', 'loopback'],
  ['0.0.0.0/8', 'reserved'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'private'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'reserved'],
  ['240.0.0.0/4', 'reserved'],
  ['::1/128', 'loopback'],
  ['::/96', 'reserved'],
  ['64:ff9b:1::/48', 'private'],
  ['100::/64', 'reserved'],
  ['2001::/23', 'reserved'],
  ['2001:db8::/32', 'reserved'],
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'],
  ['ff00::/8', 'reserved'],
];
const PARSED = RANGES.map(([cidr, kind]) => ({ range: parseCidr(cidr)!, kind }));
/** IPv6 blocks that carry an IPv4 address, which decides: NAT64 (bytes 12..15) and 6to4 (bytes 2..5). */
const EMBEDDING: Array<{ range: { base: IpBytes; bits: number }; at: number }> = [
  { range: parseCidr('64:ff9b::/96')!, at: 12 },
  { range: parseCidr('2002::/16')!, at: 2 },
];

export function addressKind(ip: IpBytes): AddressKind {
  for (const { range, at } of EMBEDDING) if (inCidr(ip, range)) return addressKind(ip.slice(at, at + 4));
  return PARSED.find(({ range }) => inCidr(ip, range))?.kind ?? 'public';
}
