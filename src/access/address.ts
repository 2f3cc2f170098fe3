import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client a request is counted against by the per-address limits: the
 * socket's remote address, or with `trustProxy` the address the proxy in
 * front saw (the last `X-Forwarded-For` entry: a proxy that appends adds
 * it there, one that overwrites leaves only it; the entries before it are
 * whatever the client sent, and would let it pick its own address). An
 * IPv4 client seen by a dual-stack socket (`::ffff:1.2.3.4`) is its IPv4
 * address; an IPv6 client is its /64, the network one host is given: one
 * host holds every address of it, so counting each address apart would
 * give it 2^64 times every limit.
 */
export function clientAddress(req: IncomingMessage, trustProxy = false): string {
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for'];
    const last = (Array.isArray(xff) ? xff.join(',') : xff)?.split(',').at(-1)?.trim();
    if (last) return addressKey(last);
  }
  return addressKey(req.socket.remoteAddress ?? 'unknown');
}

/**
 * The key of an address for the per-address limits: an IPv4 address as it
 * is (from its IPv4-mapped IPv6 form too), an IPv6 address as its /64
 * (`2001:db8:1:2::/64`, the zone dropped), without the port some proxies
 * write after it (`203.0.113.7:51234`, `[2001:db8::1]:443`); anything else
 * as it is.
 */
export function addressKey(addr: string): string {
  const v4port = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(addr);
  if (v4port !== null && isIPv4(v4port[1]!)) return v4port[1]!;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(addr);
  const bare = bracketed !== null ? bracketed[1]! : addr;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped !== null && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(bare)) return addr;
  const groups = ipv6Groups(bare.split('%')[0]!);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight groups of a valid IPv6 address, in lower-case hex without leading zeros (`::` expanded, a trailing dotted quad as two groups). */
function ipv6Groups(addr: string): string[] {
  let text = addr;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16).toString(16));
}
