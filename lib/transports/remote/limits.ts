/**
 * What a network server lets in, and the caps of the network transports: the `Origin` allow-list,
 * the bearer token (compared in constant time), the address and path defaults, option checks.
 *
 * @packageDocumentation
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { DEFAULT_MAX_LINE_BYTES } from '../../framing/ndjson';
import { isLoopbackHost } from '../../server/loopback';

/** The path the network servers answer on unless a `path` is given. */
export const DEFAULT_PATH = '/acp';

/**
 * The `Retry-After` a server at capacity answers its 503 with, in seconds: a slot frees when a
 * client leaves, which no one can foretell, so this is a polite pace for retries, not a promise.
 */
export const RETRY_AFTER_SECONDS = 5;

/** The largest accepted message on a network transport: 64 MiB, the same as a line over stdio. */
export const DEFAULT_MAX_PAYLOAD = DEFAULT_MAX_LINE_BYTES;

/** Who may connect to a network server. */
export interface AccessOptions {
  /**
   * The `Origin` values (e.g. `https://editor.example`) whose requests are accepted. Default: none.
   *
   * @remarks A request without an `Origin` header (not from a browser) is not concerned: browsers
   * always send one on a WebSocket upgrade and on a cross-origin `fetch`, so a web page the user
   * happens to visit cannot reach a local agent unless its origin is listed. `'*'` accepts any.
   */
  allowedOrigins?: readonly string[];
  /**
   * A secret the client must present as `Authorization: Bearer <token>`. Compared in constant
   * time. Default: none (no token needed).
   *
   * @remarks A server bound to an address other machines can reach (see {@link isLoopbackHost})
   * needs one, unless `insecureNoToken` is set.
   */
  token?: string;
  /**
   * Lets a server listen on an address other machines can reach without a `token`: anyone who
   * reaches it is then served (and an agent runs code on its host). Default `false`: such a
   * server is refused with a `TypeError` before it listens. Set it only when something else
   * authenticates the clients (a reverse proxy, a private network you trust).
   */
  insecureNoToken?: boolean;
}

/** Why a request was refused: the HTTP status and a short text for the response body. */
export interface Refusal {
  readonly status: 401 | 403 | 404;
  readonly reason: string;
}

/**
 * Checks a request's `Origin` and `Authorization` headers against the options.
 *
 * @returns `undefined` when the request may go on, else why not
 */
export function checkAccess(headers: IncomingHttpHeaders, options: AccessOptions): Refusal | undefined {
  const origin = headers.origin;
  if (origin !== undefined && !isOriginAllowed(origin, options.allowedOrigins ?? [])) {
    return { status: 403, reason: 'Origin not allowed' };
  }
  if (options.token !== undefined && !isBearerValid(headers.authorization, options.token)) {
    return { status: 401, reason: 'Missing or invalid bearer token' };
  }
  return undefined;
}

function isOriginAllowed(origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes('*')) return true;
  const normalized = normalizeOrigin(origin);
  return normalized !== undefined && allowed.some((entry) => normalizeOrigin(entry) === normalized);
}

/** `scheme://host[:port]` in canonical form (lower case, default port dropped), or undefined for `null` and junk. */
function normalizeOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.origin === 'null' ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether `header` is `Bearer <token>`. Both sides are hashed first so the comparison takes the
 * same time whatever the lengths, and `timingSafeEqual` compares the digests.
 *
 * @internal
 */
export function isBearerValid(header: string | undefined, token: string): boolean {
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  const presented = digest(match?.[1] ?? '');
  // Always compare, even without a header, so that a missing token costs the same as a wrong one.
  return timingSafeEqual(presented, digest(token)) && match !== null;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Validates the access options at an entry point. @throws TypeError naming the option */
export function checkAccessOptions(options: AccessOptions): void {
  const { allowedOrigins, token } = options;
  if (allowedOrigins !== undefined && (!Array.isArray(allowedOrigins) || allowedOrigins.some((o) => typeof o !== 'string'))) {
    throw new TypeError('allowedOrigins must be an array of origin strings');
  }
  if (token !== undefined && (typeof token !== 'string' || token.length === 0 || /\s/.test(token))) {
    throw new TypeError('token must be a non-empty string without whitespace');
  }
}

/**
 * Refuses a server on an address other machines can reach without a `token`, unless
 * `insecureNoToken` says so: an agent runs code on its host, so anyone who reaches it must not
 * be served silently.
 *
 * @throws TypeError naming `token` and `insecureNoToken`
 */
export function checkExposure(host: string, options: AccessOptions): void {
  if (options.insecureNoToken !== undefined && typeof options.insecureNoToken !== 'boolean') {
    throw new TypeError('insecureNoToken must be a boolean');
  }
  if (isLoopbackHost(host) || options.token !== undefined || options.insecureNoToken === true) return;
  throw new TypeError(
    `token is required to listen on ${JSON.stringify(host)}, which other machines can reach; ` +
      'set insecureNoToken: true to serve anyone who reaches it',
  );
}

/** @throws RangeError naming `name` unless `value` is undefined or a positive safe integer */
export function checkPositiveInteger(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  }
}

/** @throws RangeError unless `port` is an integer from 0 to 65535 */
export function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
}

/** @throws TypeError unless `path` starts with `/` and has no query or fragment */
export function checkPath(path: string): void {
  if (typeof path !== 'string' || !path.startsWith('/') || /[?#\s]/.test(path)) {
    throw new TypeError(`path must start with "/" and have no query, fragment or space, got ${JSON.stringify(path)}`);
  }
}

/** A request URL's path without its query. */
export function pathOf(url: string | undefined): string {
  const end = url === undefined ? -1 : url.search(/[?#]/);
  return url === undefined ? '/' : end === -1 ? url : url.slice(0, end);
}
