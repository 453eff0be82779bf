/**
 * Which addresses only this machine can reach: the servers' default host, and the check that
 * decides whether a server may run without a token.
 *
 * @packageDocumentation
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The host the network servers listen on unless one is given: loopback only. */
export const DEFAULT_HOST = '127.0.0.1';

/**
 * Whether `host` is reachable from this machine only: `localhost`, an IPv4 address in
 * `127.0.0.0/8`, `::1`, or an IPv4-mapped `::ffff:127.x.x.x`. Any other name, and the wildcards
 * `0.0.0.0` and `::`, count as reachable from other machines (a name may resolve to anything).
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name === 'localhost.') return true;
  if (isIPv4(name)) return name.startsWith('127.');
  if (!isIPv6(name)) return false;
  // The URL parser writes an IPv6 address in its one canonical form (`::ffff:127.0.0.1` as `::ffff:7f00:1`).
  const canonical = new URL(`http://[${name}]/`).hostname.slice(1, -1);
  return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(canonical);
}
