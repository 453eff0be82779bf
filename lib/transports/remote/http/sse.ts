/**
 * Server-sent events, as far as Streamable HTTP uses them: one JSON-RPC message per `data:`
 * event, `:` comments as keep-alives.
 *
 * @packageDocumentation
 */
import { hasByteOrderMark } from '../../../framing/ndjson';

/** The event that carries one message's JSON text (which holds no line break). */
export function sseEvent(json: string, id?: string): string {
  return id === undefined ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`;
}

/** A comment line that keeps an idle stream (and the proxies on its way) open. */
export const SSE_KEEP_ALIVE = ':\n\n';

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
/** `data:`, the field of an event's data lines. */
const DATA_FIELD = Buffer.from('data:');
/** The length of the UTF-8 byte order mark a stream may start with (not part of its first line). */
const BOM_BYTES = 3;

/**
 * Splits an event stream into the data of its events, as bytes.
 *
 * @remarks Lines end in LF, CRLF or CR; `data:` lines of one event are joined with LF; other
 * fields and comments are ignored; an event whose data grows past `maxBytes` is reported and
 * skipped; a byte order mark that starts the stream is dropped. Works on the bytes as they come:
 * line ends are found by native searches, nothing is decoded, and the data of an event of one
 * line is handed over as a view of the chunk it came in (no copy), so the reader may change its
 * bytes in place. The bytes of a line that has not ended are held until it does (one copy then).
 * @internal
 */
export class SseParser {
  readonly #onEvent: (data: Buffer) => void;
  readonly #onTooLarge: () => void;
  readonly #maxBytes: number;
  /** The chunks of a line that has not ended yet, and their length. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The data lines of the event under way. */
  #data: Buffer[] = [];
  #dataBytes = 0;
  #isSkipping = false;
  #wasCarriageReturn = false;
  #isAtStart = true;

  constructor(maxBytes: number, onEvent: (data: Buffer) => void, onTooLarge: () => void) {
    this.#maxBytes = maxBytes;
    this.#onEvent = onEvent;
    this.#onTooLarge = onTooLarge;
  }

  /** Feeds bytes. */
  write(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    // A CRLF split across chunks: the CR already ended the line.
    if (this.#wasCarriageReturn && bytes[0] === LF) start = 1;
    this.#wasCarriageReturn = false;
    let lf = bytes.indexOf(LF, start);
    let cr = bytes.indexOf(CR, start);
    if (lf === -1 && cr === -1) return this.#hold(start === 0 ? bytes : bytes.subarray(start));
    if (this.#pendingBytes > 0) {
      // The held start of the line, joined to this chunk once its end has come.
      const held = this.#pendingBytes;
      this.#pending.push(start === 0 ? bytes : bytes.subarray(start));
      bytes = Buffer.concat(this.#pending, held + bytes.length - start);
      this.#pending = [];
      this.#pendingBytes = 0;
      lf = lf === -1 ? -1 : lf - start + held;
      cr = cr === -1 ? -1 : cr - start + held;
      start = 0;
    }
    if (this.#isAtStart) {
      this.#isAtStart = false;
      if (hasByteOrderMark(bytes, 0, bytes.length)) start += BOM_BYTES;
    }
    // The next LF and the next CR, each searched again once passed.
    while (lf !== -1 || cr !== -1) {
      const end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      this.#line(bytes, start, end);
      start = end + 1;
      if (end === cr) {
        if (start === bytes.length) this.#wasCarriageReturn = true;
        else if (start === lf) start++;
        cr = bytes.indexOf(CR, start);
      }
      if (lf !== -1 && lf < start) lf = bytes.indexOf(LF, start);
    }
    if (start < bytes.length) this.#hold(bytes.subarray(start));
  }

  /** Ends the stream: a last line without its line end, and a last event without its blank line, count. */
  end(): void {
    const rest = Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    const from = this.#isAtStart && hasByteOrderMark(rest, 0, rest.length) ? BOM_BYTES : 0;
    this.#isAtStart = false;
    if (rest.length > from) this.#line(rest, from, rest.length);
    this.#dispatch();
  }

  /** Holds the start of a line that has not ended; one longer than any event may be is skipped. */
  #hold(bytes: Buffer): void {
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes <= this.#maxBytes + 16) return;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#skip();
  }

  #line(bytes: Buffer, start: number, end: number): void {
    if (start === end) return this.#dispatch();
    if (this.#isSkipping || !isField(bytes, start, end)) return;
    const from = start + (bytes[start + DATA_FIELD.length] === SPACE ? DATA_FIELD.length + 1 : DATA_FIELD.length);
    this.#dataBytes += end - from + 1;
    if (this.#dataBytes > this.#maxBytes + 1) return this.#skip();
    this.#data.push(bytes.subarray(from, end));
  }

  #skip(): void {
    this.#data = [];
    this.#dataBytes = 0;
    if (!this.#isSkipping) this.#onTooLarge();
    this.#isSkipping = true;
  }

  #dispatch(): void {
    const data = this.#data;
    const size = this.#dataBytes - 1;
    this.#data = [];
    this.#dataBytes = 0;
    this.#isSkipping = false;
    if (data.length > 0) this.#onEvent(data.length === 1 ? data[0]! : joinLines(data, size));
  }
}

function isField(bytes: Buffer, start: number, end: number): boolean {
  if (end - start < DATA_FIELD.length) return false;
  for (let k = 0; k < DATA_FIELD.length; k++) if (bytes[start + k] !== DATA_FIELD[k]) return false;
  return true;
}

/** The data lines of one event joined with LF (`size` bytes in all). */
function joinLines(lines: readonly Buffer[], size: number): Buffer {
  const joined = Buffer.allocUnsafe(size);
  let at = lines[0]!.copy(joined, 0);
  for (let i = 1; i < lines.length; i++) {
    joined[at++] = LF;
    at += lines[i]!.copy(joined, at);
  }
  return joined;
}

/**
 * Yields the data of each event of an event-stream body, as each event ends (the last one also
 * without its blank line). Stopping early ends the iteration of `body` (a fetch body is cancelled).
 *
 * @throws RangeError (from the iteration) for an event whose data is over `maxBytes`
 * @internal
 */
export async function* sseEventData(body: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<string> {
  const events: string[] = [];
  let isTooLarge = false;
  const parser = new SseParser(
    maxBytes,
    (data) => void events.push(data.toString('utf8')),
    () => void (isTooLarge = true),
  );
  for await (const chunk of body) {
    parser.write(chunk);
    if (isTooLarge) throw new RangeError(`an event-stream event was over ${maxBytes} bytes`);
    yield* events.splice(0);
  }
  parser.end();
  yield* events.splice(0);
}
