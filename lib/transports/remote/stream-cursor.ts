/**
 * Stream cursors on the wire: where a resumable server puts each message's `_meta["acp/cursor"]`
 * and where a resuming client reads it, by splicing the message's text (its other bytes, ids
 * included, are kept as they are), and the control messages of a resumable WebSocket.
 *
 * @packageDocumentation
 */

/** The `_meta` key of a message's cursor on a resumable stream. */
export const CURSOR_META_KEY = 'acp/cursor';
/** The first frame of a WebSocket that resumes a connection: `{connectionId, cursor}` (cursor `null`: nothing received yet). */
export const STREAM_RESUME_METHOD = 'stream/resume';
/** The server's answer to a resume it can serve: `{received}`, how many client messages it has applied. */
export const STREAM_RESUMED_METHOD = 'stream/resumed';
/** The server's answer to a resume it cannot serve: `{reason}`; the socket then closes. */
export const STREAM_RESUME_FAILED_METHOD = 'stream/resume_failed';
/** The server's periodic acknowledgement on a resumable WebSocket: `{received}`. */
export const STREAM_ACK_METHOD = 'stream/ack';

/** One member of a JSON object's text: its key and where its value starts and ends. */
interface Member {
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

function skipSpace(text: string, at: number): number {
  while (at < text.length && WHITESPACE.has(text[at]!)) at++;
  return at;
}

/** The index just after the string that starts (with its quote) at `at`. */
function skipString(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote === -1) return text.length;
    let backslashes = 0;
    for (let j = quote - 1; text[j] === '\\'; j--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/** The index just after the JSON value that starts at `at`. */
function skipValue(text: string, at: number): number {
  const first = text[at];
  if (first === '"') return skipString(text, at);
  if (first !== '{' && first !== '[') {
    let i = at;
    while (i < text.length && !',}]'.includes(text[i]!) && !WHITESPACE.has(text[i]!)) i++;
    return i;
  }
  let depth = 0;
  let i = at;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      i = skipString(text, i);
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return i;
}

/** The key of the string that starts at `at` and ends just before `end`. */
function keyOf(text: string, at: number, end: number): string {
  const raw = text.slice(at + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(at, end)) as string) : raw;
}

/**
 * Walks the members of the JSON object whose `{` is at `at`, calling `visit` for each until it
 * returns true; returns the member it stopped at, `null` when it visited them all, `undefined` when
 * the text is not an object.
 */
function walkMembers(text: string, at: number, visit: (member: Member) => boolean): Member | null | undefined {
  if (text[at] !== '{') return undefined;
  let i = skipSpace(text, at + 1);
  if (text[i] === '}') return null;
  while (i < text.length && text[i] === '"') {
    const keyEnd = skipString(text, i);
    const key = keyOf(text, i, keyEnd);
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') return undefined;
    const start = skipSpace(text, i + 1);
    const end = skipValue(text, start);
    const member = { key, start, end };
    if (visit(member)) return member;
    i = skipSpace(text, end);
    if (text[i] === '}') return null;
    if (text[i] !== ',') return undefined;
    i = skipSpace(text, i + 1);
  }
  return undefined;
}

/** The first member of the object at `at` that `accept` takes, or `undefined`. */
function findMember(text: string, at: number, accept: (member: Member) => boolean): Member | undefined {
  return walkMembers(text, at, accept) ?? undefined;
}

/** Inserts `member` (a `"key":value` text) first into the object whose `{` is at `at`. */
function insertFirst(text: string, at: number, member: string, isEmpty: boolean): string {
  return `${text.slice(0, at + 1)}${member}${isEmpty ? '' : ','}${text.slice(at + 1)}`;
}

/**
 * Stamps `cursor` on a message's text as `_meta["acp/cursor"]`: in `params._meta` when `params` is
 * an object (requests, notifications), else in `result._meta` when `result` is an object, else in
 * a `_meta` member of the message itself (an error answer, a non-object result). Any `_meta`
 * already there keeps its other members. Text that is not a JSON object is returned unchanged.
 *
 * @internal
 */
export function stampCursor(line: string, cursor: string): string {
  const at = skipSpace(line, 0);
  const isObject = (m: Member): boolean => line[m.start] === '{';
  let topMeta: Member | undefined;
  const holder = walkMembers(line, at, (m) => {
    if (m.key === '_meta' && isObject(m)) topMeta = m;
    return isObject(m) && (m.key === 'params' || m.key === 'result');
  });
  if (holder === undefined) return line;
  const entry = `"${CURSOR_META_KEY}":${JSON.stringify(cursor)}`;
  const targetAt = holder === null ? at : holder.start;
  let isEmpty = true;
  const meta =
    holder === null
      ? topMeta
      : findMember(line, targetAt, (m) => {
          isEmpty = false;
          return m.key === '_meta' && isObject(m);
        });
  if (meta) return insertFirst(line, meta.start, entry, line[skipSpace(line, meta.start + 1)] === '}');
  return insertFirst(line, targetAt, `"_meta":{${entry}}`, holder === null ? line[skipSpace(line, at + 1)] === '}' : isEmpty);
}

/**
 * The cursor {@link stampCursor} put on a message's text, or `undefined` when it has none.
 *
 * @internal
 */
export function cursorOf(text: string): string | undefined {
  const isObject = (m: Member): boolean => text[m.start] === '{';
  // The stamp is the first member wherever it is, so this stops early on a stamped message.
  const holder = findMember(
    text,
    skipSpace(text, 0),
    (m) => isObject(m) && (m.key === 'params' || m.key === 'result' || m.key === '_meta'),
  );
  if (holder === undefined) return undefined;
  const meta = holder.key === '_meta' ? holder : findMember(text, holder.start, (m) => m.key === '_meta' && isObject(m));
  const entry = meta && findMember(text, meta.start, (m) => m.key === CURSOR_META_KEY);
  if (entry === undefined || text[entry.start] !== '"') return undefined;
  return keyOf(text, entry.start, entry.end);
}

/**
 * The method of a control message of a resumable WebSocket (`stream/…`), or `undefined` for any
 * other frame. Cheap for ordinary frames: only text holding `"stream/` is parsed.
 *
 * @internal
 */
export function controlOf(text: string): { method: string; params: Record<string, unknown> } | undefined {
  if (!text.includes('"stream/')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || 'id' in value) return undefined;
  const { method, params } = value as { method?: unknown; params?: unknown };
  if (typeof method !== 'string' || !method.startsWith('stream/')) return undefined;
  return { method, params: typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {} };
}

/** The text of a control message. @internal */
export function controlMessage(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params });
}
