/**
 * What every fake model API streams with: server-sent events on a response, and a reply streamed
 * word by word in the events of one API (its {@link ReplyFormat}), started at once or held open
 * after its first word.
 *
 * @packageDocumentation
 */
import type { ServerResponse } from 'node:http';
import type { MadeCall } from './tool-call-script';

/** One server-sent event: an optional `event:` name and its `data` (an object as JSON, a string as it is). */
export interface SseEvent {
  readonly event?: string;
  readonly data: unknown;
}

/** The events of one API's streamed answer. */
export interface ReplyFormat {
  /** The events before the first word. */
  head(): SseEvent[];
  /** The events carrying one word (its leading space included). */
  delta(text: string): SseEvent[];
  /** The events after the last word: `text` is the whole reply, `words` how many words it had. */
  tail(text: string, words: number): SseEvent[];
  /** A whole streamed answer that calls a tool. */
  call(call: MadeCall): SseEvent[];
}

/** Writes JSON with `status`. */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** An event stream on one response: its head written on the first event. */
export class SseStream {
  /** Resolves once the client has gone away from this stream (or it ended). */
  readonly disconnected: Promise<void>;
  readonly #response: ServerResponse;
  #isOpen = false;

  constructor(response: ServerResponse) {
    this.#response = response;
    this.disconnected = new Promise((resolve) => response.once('close', () => resolve()));
  }

  /** Whether the client has gone (nothing more can be written). */
  get isGone(): boolean {
    return this.#response.destroyed;
  }

  /** Writes `events` (the response head first, once). */
  send(events: readonly SseEvent[]): this {
    if (!this.#isOpen) {
      this.#isOpen = true;
      this.#response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    }
    for (const { event, data } of events) {
      const name = event === undefined ? '' : `event: ${event}\n`;
      this.#response.write(`${name}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    }
    return this;
  }

  /** Ends the stream. */
  end(): void {
    this.#response.end();
  }
}

/** A reply streamed one word per delta: whole at once, or held after its first word until {@link StreamedReply.finish}. */
export class StreamedReply {
  readonly #stream: SseStream;
  readonly #format: ReplyFormat;
  readonly #words: readonly string[];
  #sent = 0;
  #isStarted = false;

  constructor(stream: SseStream, format: ReplyFormat, words: readonly string[]) {
    this.#stream = stream;
    this.#format = format;
    this.#words = words;
  }

  /** Sends the head and the first word. */
  start(): void {
    if (this.#isStarted) return;
    this.#isStarted = true;
    this.#stream.send(this.#format.head());
    this.#next();
  }

  /** Sends the rest and ends the stream (nothing once the client has gone). */
  finish(): void {
    if (this.#stream.isGone) return;
    this.start();
    while (this.#sent < this.#words.length) this.#next();
    this.#stream.send(this.#format.tail(this.#words.join(''), this.#words.length)).end();
  }

  #next(): void {
    const word = this.#words[this.#sent++];
    if (word !== undefined) this.#stream.send(this.#format.delta(word));
  }
}
