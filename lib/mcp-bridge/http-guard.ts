/**
 * What the bridge's loopback endpoint checks before it reads a request: the `Host` (against DNS
 * rebinding), the `Origin` (against web pages), and the per-server secret (in constant time).
 *
 * @packageDocumentation
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The host names that mean this machine's loopback interface (as `URL` spells them). */
const LOOPBACK_HOSTNAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A fresh secret: 32 random bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether `given` equals `expected`, in a time that does not depend on where they differ (both are
 * hashed first, so their lengths do not show either).
 */
export function isSameSecret(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(expected), digest(given));
}

/** The token of an `Authorization: Bearer <token>` header; `undefined` for any other value. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header.trim());
  return match ? match[1] : undefined;
}

/**
 * Whether a `Host` header names this loopback listener: `127.0.0.1`, `localhost` or `[::1]` with
 * its port. A DNS name that merely resolves to 127.0.0.1 (a rebinding attack) is refused.
 */
export function isLoopbackHost(host: string | undefined, port: number): boolean {
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
