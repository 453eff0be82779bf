/**
 * What the bridge's loopback endpoint checks before it reads a request: the `Host` (against DNS
 * rebinding) and the `Origin` (against web pages); the per-server secret is checked as the remote
 * server checks its token (`isBearerValid`).
 *
 * @packageDocumentation
 */
import { randomBytes } from 'node:crypto';

/** The host names that mean this machine's loopback interface (as `URL` spells them). */
const LOOPBACK_HOSTNAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A fresh secret: 32 random bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether a `Host` header names this loopback listener: `127.0.0.1`, `localhost` or `[::1]` with
 * its port. A DNS name that merely resolves to 127.0.0.1 (a rebinding attack) is refused.
 */
export function isLoopbackHostHeader(host: string | undefined, port: number): boolean {
  if (host === undefined || host === '' || /[/?#@\s]/.test(host)) return false;
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return false;
  }
  const urlPort = url.port === '' ? 80 : Number(url.port);
  return LOOPBACK_HOSTNAMES.has(url.hostname) && urlPort === port;
}

/**
 * Whether a request's `Origin` may call the endpoint: none (not a browser), or an `http(s)` origin
 * on a loopback host. `null` and every other origin are refused.
 */
export function isAllowedOrigin(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTNAMES.has(url.hostname);
}
