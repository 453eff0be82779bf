/**
 * Redaction of credentials in the trace copy of a message (never on the wire): credential headers,
 * URL userinfo and credential query values, as the Rust conductor's trace documentation lists them.
 *
 * @packageDocumentation
 */

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

/** Header names whose values are redacted (compared case-insensitively). */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key'];

/**
 * URL query keys whose values are redacted: compared after percent-decoding, case-insensitively,
 * ignoring `-` and `_`.
 */
export const CREDENTIAL_QUERY_KEYS: readonly string[] = [
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'key',
  'secret',
  'client_secret',
  'password',
  'passwd',
  'pwd',
  'auth',
  'authorization',
  'bearer',
  'signature',
  'sig',
  'credential',
  'credentials',
];

/**
 * Words that make an environment variable's name a credential's (`GITHUB_TOKEN`, `OPENAI_API_KEY`,
 * `ACP_WIRE_MCP_TOKEN`): found anywhere in the name, compared case-insensitively, ignoring `-` and `_`.
 */
export const CREDENTIAL_ENV_WORDS: readonly string[] = [
  'token',
  'secret',
  'password',
  'passwd',
  'apikey',
  'accesskey',
  'privatekey',
  'credential',
  'authorization',
];

const HEADER_SET = new Set(CREDENTIAL_HEADERS);
const QUERY_KEY_SET = new Set(CREDENTIAL_QUERY_KEYS.map(normalizeKey));

/**
 * A copy of `value` with credentials redacted, for a trace or a log.
 *
 * @remarks
 * - Under any `headers` member: in an array of `{name, value}` objects (ACP's `HttpHeader`), the
 *   `value` of a credential header; in an object, the value of each credential header key.
 *   Credential headers: `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `X-Api-Key`.
 * - Under any `env` member: in an array of `{name, value}` objects (ACP's `EnvVariable`, as in a
 *   stdio MCP server's declaration), the `value` of a variable whose name holds a credential word
 *   ({@link CREDENTIAL_ENV_WORDS}); in an object, the value of each such key.
 * - Every `url` member that is an `http:` or `https:` URL: userinfo removed, and the values of
 *   credential query keys ({@link CREDENTIAL_QUERY_KEYS}, valueless and repeated ones too) become
 *   `[REDACTED]`; the other query pairs keep their spelling, order and encoding. A URL that does
 *   not parse is replaced whole. A URL without credentials is left exactly as it was.
 * - Not a general sanitizer: other custom fields, path or fragment secrets and secrets in prompt
 *   text are not detected.
 *
 * Does not modify `value` (a JSON value: plain objects, arrays and primitives). Deeply nested
 * input is copied and walked without recursion.
 */
export function redactCredentials<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  return redactInPlace(copyJson(value));
}

/** A deep copy of a JSON value, made without recursion. */
function copyJson<T>(value: T): T {
  const copy = (node: object): Record<string, unknown> | unknown[] => (Array.isArray(node) ? [...node] : { ...node });
  const root = copy(value as object);
  const stack: (Record<string, unknown> | unknown[])[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const member = node[key];
      if (typeof member !== 'object' || member === null) continue;
      const child = copy(member);
      node[key] = child;
      stack.push(child);
    }
  }
  return root as T;
}

/** Redacts `value` itself (a copy the caller owns, e.g. freshly parsed JSON). @internal */
export function redactInPlace<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    const object = node as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      const member = object[key];
      if (key === 'url' && typeof member === 'string') object[key] = redactUrl(member);
      else if (key === 'headers') redactNamedValues(member, isCredentialHeader);
      else if (key === 'env') redactNamedValues(member, isCredentialEnvName);
      if (typeof object[key] === 'object' && object[key] !== null) stack.push(object[key]);
    }
  }
  return value;
}

/**
 * An `http(s)` URL with userinfo removed and credential query values replaced; other strings as
 * they are. See {@link redactCredentials}.
 */
export function redactUrl(text: string): string {
  if (!/^https?:\/\//i.test(text)) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return REDACTED;
  }
  const hasUserinfo = url.username !== '' || url.password !== '';
  const hashAt = text.indexOf('#');
  const head = hashAt === -1 ? text : text.slice(0, hashAt);
  const queryAt = head.indexOf('?');
  const query = queryAt === -1 ? undefined : head.slice(queryAt + 1);
  const redactedQuery = query === undefined ? undefined : redactQuery(query);
  if (!hasUserinfo && redactedQuery === query) return text;
  const search = redactedQuery === undefined ? '' : `?${redactedQuery}`;
  return `${url.protocol}//${url.host}${url.pathname}${search}${url.hash}`;
}

function redactQuery(query: string): string {
  let changed = false;
  const pairs = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    if (key === '' || !QUERY_KEY_SET.has(normalizeKey(key))) return pair;
    changed = true;
    return `${key}=${REDACTED}`;
  });
  return changed ? pairs.join('&') : query;
}

/** Redacts the values named by `isCredential` in `{name, value}[]` or in a `{name: value}` map. */
function redactNamedValues(named: unknown, isCredential: (name: string) => boolean): void {
  if (Array.isArray(named)) {
    for (const entry of named) {
      if (!isPlainObject(entry) || typeof entry.name !== 'string') continue;
      if (isCredential(entry.name) && 'value' in entry) entry.value = REDACTED;
    }
  } else if (isPlainObject(named)) {
    for (const name of Object.keys(named)) if (isCredential(name)) named[name] = REDACTED;
  }
}

function isCredentialHeader(name: string): boolean {
  return HEADER_SET.has(name.toLowerCase());
}

function isCredentialEnvName(name: string): boolean {
  const normalized = name.toLowerCase().replace(/[-_]/g, '');
  return CREDENTIAL_ENV_WORDS.some((word) => normalized.includes(word));
}

function normalizeKey(key: string): string {
  let decoded = key.replace(/\+/g, ' ');
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    // Not valid percent-encoding: compare the text as it is.
  }
  return decoded.toLowerCase().replace(/[-_]/g, '');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
