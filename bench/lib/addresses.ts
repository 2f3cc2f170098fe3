/**
 * Loopback source addresses for load clients. The bridge admits at most
 * MAX_CONNECTIONS_PER_IP connections per remote address (default 100), so a
 * load of thousands of clients spreads them over 127.0.0.2, 127.0.0.3, …
 * (the whole of 127.0.0.0/8 reaches the loopback interface on Linux, with
 * no configuration). 127.0.0.1 is left to probes. Pure functions.
 */

/** First address index used: 127.0.0.2. */
const FIRST = 2;
/** Largest address index: 127.255.255.254. */
const LAST = 0xff_ff_fe;

/** The loopback source address of client `client` when each address carries `perAddress` clients. */
export function sourceAddress(client: number, perAddress: number): string {
  if (!Number.isInteger(client) || client < 0) throw new RangeError(`client index must be a non-negative integer, got ${client}`);
  if (!Number.isInteger(perAddress) || perAddress < 1) throw new RangeError(`clients per address must be a positive integer, got ${perAddress}`);
  const n = FIRST + Math.floor(client / perAddress);
  if (n > LAST) throw new RangeError(`client ${client} needs more loopback addresses than 127.0.0.0/8 has`);
  return `127.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`;
}

/** How many distinct source addresses `clients` clients use at `perAddress` each. */
export function addressCount(clients: number, perAddress: number): number {
  return Math.ceil(clients / perAddress);
}
