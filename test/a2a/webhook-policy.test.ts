// Which webhooks the server may reach (src/a2a/webhook-policy.ts, src/a2a/ip-ranges.ts): every
// address form an attacker can write for an internal target is recognised as one.
import { describe, expect, it } from 'vitest';
import { addressKind, parseIp } from '../../src/a2a/ip-ranges.ts';
import { WebhookPolicy } from '../../src/a2a/webhook-policy.ts';

const kind = (a: string) => {
  const ip = parseIp(a);
  return ip ? addressKind(ip) : null;
};

describe('address kinds', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:a00:1::', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['172.32.0.1', 'public'],
  ])('%s is %s', (address, expected) => {
    expect(kind(address)).toBe(expected);
  });

  it.each(['1.2.3', '01.2.3.4', '256.1.1.1', '1:2:3:4:5:6:7:8:9', 'fe80::1%eth0', ':1', 'localhost'])('%s is not an address', (text) => {
    expect(parseIp(text)).toBeNull();
  });
});

describe('the webhook policy', () => {
  const strict = new WebhookPolicy({ pushAllowHosts: [], pushAllowHttpLoopback: false });
  const open = new WebhookPolicy({ pushAllowHosts: ['127.0.0.1', '10.0.0.0/8', 'Hooks.Internal.'], pushAllowHttpLoopback: true });
  const url = (p: WebhookPolicy, raw: string) => {
    const u = p.url(raw);
    if (typeof u === 'string') throw new Error(u);
    return u;
  };

  it('takes https only, plain http only to loopback where allowed, never with credentials in the URL', () => {
    expect(strict.url('http://127.0.0.1:9/h')).toMatch(/must be https/);
    expect(open.url('http://127.0.0.1:9/h')).toBeInstanceOf(URL);
    expect(open.url('http://localhost:9/h')).toBeInstanceOf(URL);
    expect(open.url('http://10.0.0.1/h')).toMatch(/only to a loopback/);
    expect(open.url('ftp://example.com/h')).toMatch(/must be https/);
    expect(open.url('https://u:p@example.com/h')).toMatch(/user name or password/);
    expect(open.url('not a url')).toMatch(/not an absolute URL/);
    // The URL parser's own spellings of an address end up as the address.
    expect(url(strict, 'https://2130706433/h').hostname).toBe('127.0.0.1');
    expect(url(strict, 'https://0x7f.1/h').hostname).toBe('127.0.0.1');
  });

  it('refuses a name when any of its addresses is internal, unless the allow-list names the address, a range holding it, or the name', () => {
    const u = url(strict, 'https://hooks.example.com/h');
    expect(strict.addresses(u, ['93.184.216.34'])).toBeNull();
    expect(strict.addresses(u, ['93.184.216.34', '10.0.0.5'])).toMatch(/10\.0\.0\.5, a private address/);
    expect(strict.addresses(u, [])).toMatch(/no address/);
    expect(open.addresses(u, ['10.9.9.9'])).toBeNull();
    expect(open.addresses(u, ['192.168.0.1'])).toMatch(/private/);
    expect(open.addresses(url(open, 'https://hooks.internal/h'), ['192.168.0.1'])).toBeNull();
    // Plain http stays on loopback whatever the name resolves to.
    expect(open.addresses(url(open, 'http://localhost:9/h'), ['127.0.0.1'])).toBeNull();
    expect(open.addresses(url(open, 'http://localhost:9/h'), ['10.0.0.1'])).toMatch(/only to loopback/);
  });
});
