/**
 * Server-sent events, as far as Streamable HTTP uses them: one JSON-RPC message per `data:`
 * event, `:` comments as keep-alives.
 *
 * @packageDocumentation
 */

/** The event that carries one message's JSON text (which holds no line break). */
export function sseEvent(json: string, id?: string): string {
  return id === undefined ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`;
}

/** A comment line that keeps an idle stream (and the proxies on its way) open. */
export const SSE_KEEP_ALIVE = ':\n\n';

/**
 * Splits an event stream into the data of its events.
 *
 * @remarks Lines end in LF, CRLF or CR; `data:` lines of one event are joined with `\n`; other
 * fields and comments are ignored; an event whose data grows past `maxBytes` is reported and
 * skipped.
 * @internal
 */
export class SseParser {
  readonly #onEvent: (data: string) => void;
  readonly #onTooLarge: () => void;
  readonly #maxBytes: number;
  readonly #decoder = new TextDecoder('utf-8');
  #rest = '';
  #data: string[] = [];
  #dataBytes = 0;
  #isSkipping = false;
  #wasCarriageReturn = false;

  constructor(maxBytes: number, onEvent: (data: string) => void, onTooLarge: () => void) {
    this.#maxBytes = maxBytes;
    this.#onEvent = onEvent;
    this.#onTooLarge = onTooLarge;
  }

  /** Feeds bytes. */
  write(chunk: Uint8Array): void {
    let text = this.#rest + this.#decoder.decode(chunk, { stream: true });
    // A CRLF split across chunks: the LF was already taken as the end of the line.
    if (this.#wasCarriageReturn && text.charCodeAt(0) === 0x0a) text = text.slice(1);
    this.#wasCarriageReturn = false;
    // Line ends found by native searches, far cheaper than a JavaScript loop over each character:
    // the next LF and the next CR, each searched again once passed.
    let start = 0;
    let lf = text.indexOf('\n');
    let cr = text.indexOf('\r');
    while (lf !== -1 || cr !== -1) {
      const end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      this.#line(text.slice(start, end));
      start = end + 1;
      if (end === cr) {
        if (start === text.length) this.#wasCarriageReturn = true;
        else if (start === lf) start++;
        cr = text.indexOf('\r', start);
      }
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
    }
    this.#rest = text.slice(start);
    if (this.#rest.length > this.#maxBytes + 16) {
      this.#rest = '';
      this.#skip();
    }
  }

  /** Ends the stream: a last line without its line end, and a last event without its blank line, count. */
  end(): void {
    const rest = this.#rest + this.#decoder.decode();
    this.#rest = '';
    if (rest !== '') this.#line(rest);
    this.#dispatch();
  }

  #line(line: string): void {
    if (line === '') return this.#dispatch();
    if (this.#isSkipping || !line.startsWith('data:')) return;
    const value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5);
    this.#dataBytes += Buffer.byteLength(value) + 1;
    if (this.#dataBytes > this.#maxBytes + 1) return this.#skip();
    this.#data.push(value);
  }

  #skip(): void {
    this.#data = [];
    this.#dataBytes = 0;
    if (!this.#isSkipping) this.#onTooLarge();
    this.#isSkipping = true;
  }

  #dispatch(): void {
    const data = this.#data;
    this.#data = [];
    this.#dataBytes = 0;
    this.#isSkipping = false;
    if (data.length > 0) this.#onEvent(data.join('\n'));
  }
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
    (data) => void events.push(data),
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
