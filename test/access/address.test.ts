import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { addressKey, clientAddress } from '../../src/access/address.js';

/** A request as `clientAddress` reads it: the socket's address and the headers. */
function req(remoteAddress: string | undefined, xff?: string | string[]): IncomingMessage {
  return { socket: { remoteAddress }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } } as unknown as IncomingMessage;
}

describe('addressKey', () => {
  it('keeps an IPv4 address, and takes it out of its IPv4-mapped IPv6 form', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::FFFF:203.0.113.7')).toBe('203.0.113.7');
  });
  it('counts an IPv6 address as its /64, however it is written', () => {
    const key = '2001:db8:1:2::/64';
    for (const a of [
      '2001:db8:1:2::1',
      '2001:0db8:0001:0002:ffff:ffff:ffff:ffff',
      '2001:DB8:1:2:0:0:0:9',
      '[2001:db8:1:2::42]',
      '2001:db8:1:2::1%eth0',
      '2001:db8:1:2::1.2.3.4',
    ]) {
      expect(addressKey(a), a).toBe(key);
    }
    expect(addressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1')).toBe('fe80:0:0:0::/64');
    expect(addressKey('2001:db8::')).toBe('2001:db8:0:0::/64');
  });
  it('drops the port a proxy may write after an address', () => {
    expect(addressKey('203.0.113.7:51234')).toBe('203.0.113.7');
    expect(addressKey('[2001:db8:1:2::1]:443')).toBe('2001:db8:1:2::/64');
    expect(addressKey('[::ffff:203.0.113.7]:8080')).toBe('203.0.113.7');
  });
  it('leaves what is not an address as it is', () => {
    expect(addressKey('unknown')).toBe('unknown');
    expect(addressKey('10.0.0.256')).toBe('10.0.0.256');
  });
});

describe('clientAddress', () => {
  it('is the socket address, keyed, without trustProxy whatever X-Forwarded-For says', () => {
    expect(clientAddress(req('::ffff:127.0.0.1', '198.51.100.1'))).toBe('127.0.0.1');
    expect(clientAddress(req('2001:db8:5:6::77'))).toBe('2001:db8:5:6::/64');
    expect(clientAddress(req(undefined))).toBe('unknown');
  });
  it('with trustProxy is the last X-Forwarded-For entry: the entries a client sends before it do not change its address', () => {
    expect(clientAddress(req('10.0.0.2', '198.51.100.1'), true)).toBe('198.51.100.1');
    // An appending proxy behind a client that sent its own header.
    expect(clientAddress(req('10.0.0.2', '1.1.1.1, 198.51.100.1'), true)).toBe('198.51.100.1');
    expect(clientAddress(req('10.0.0.2', '2.2.2.2,  198.51.100.1 '), true)).toBe('198.51.100.1');
    expect(clientAddress(req('10.0.0.2', ['1.1.1.1', '2001:db8:9:9::1']), true)).toBe('2001:db8:9:9::/64');
    // No entry: the proxy's own address.
    expect(clientAddress(req('10.0.0.2', ''), true)).toBe('10.0.0.2');
    expect(clientAddress(req('10.0.0.2'), true)).toBe('10.0.0.2');
  });
});
