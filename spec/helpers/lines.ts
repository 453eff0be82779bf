/**
 * The one line reader of the specs: collects the lines of a byte stream exactly as written, and
 * lets a test await them. Every wait is bounded: it fails with the reader's label, what it waited
 * for and the last lines seen, instead of hanging until mocha's timeout.
 */
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { isResponseTo, parseMessage, type MessageMatch, type WireMessage } from './messages';

/** How long a wait lasts by default before it fails (below mocha's 20 s, so its message shows). */
export const DEFAULT_WAIT_MS = 15_000;

/** Options of a {@link LineReader}. */
export interface LineReaderOptions {
  /** Names the stream in failure messages. Default `'stream'`. */
  label?: string;
  /** The bound of every wait, in ms (`Infinity`: unbounded). Default {@link DEFAULT_WAIT_MS}. */
  waitMs?: number;
}

interface Waiter {
  /** What it waits for, for the failure message. */
  readonly what: string;
  /** Re-evaluates the wait; true once it has settled. */
  check(): boolean;
  fail(reason: string): void;
}

const ANY_LINE: MessageMatch = Object.defineProperty(() => true, 'name', { value: 'any line' });

/**
 * Reads a stream line by line (without its `\n`; a `\r` stays) and never changes how the stream
 * flows for others: it adds a `'data'` listener and decodes a copy, so it can tap a stream a
 * Connection also reads.
 *
 * @remarks Three ways to consume lines, for three kinds of claims:
 * - {@link LineReader.take}: removes the first line not taken yet that matches (a queue; other
 *   lines stay for later takes) — to pick lines out of interleaved traffic.
 * - {@link LineReader.find} / {@link LineReader.findMessage}: the first line ever received that
 *   matches, taken or not — for "this was sent at some point".
 * - {@link LineReader.waitForLines} / {@link LineReader.next}: by count — for "exactly these lines".
 *
 * {@link LineReader.findText} waits on the text itself, partial last line included.
 */
export class LineReader {
  /** Every complete line received, in order. */
  readonly lines: string[] = [];
  /** Names the stream in failure messages. */
  readonly label: string;
  readonly #waitMs: number;
  readonly #parsed: (WireMessage | undefined)[] = [];
  readonly #taken = new Set<number>();
  readonly #waiters = new Set<Waiter>();
  readonly #listeners: ((line: string) => void)[] = [];
  readonly #decoder = new StringDecoder('utf8');
  #firstUntaken = 0;
  #rest = '';
  #isEnded = false;

  constructor(stream: Readable, options: LineReaderOptions = {}) {
    this.label = options.label ?? 'stream';
    this.#waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
    stream.on('data', (chunk: Buffer | string) => this.#push(typeof chunk === 'string' ? chunk : this.#decoder.write(chunk)));
    stream.once('end', () => this.#end());
    stream.once('close', () => this.#end());
    // A reset socket or a killed child must end the reader, not crash the test run.
    stream.on('error', () => this.#end());
  }

  /** Text received after the last newline (stays empty on a protocol stream). */
  get rest(): string {
    return this.#rest;
  }

  /** Everything received, as text. */
  get text(): string {
    return this.lines.map((line) => `${line}\n`).join('') + this.#rest;
  }

  /** Whether the stream has ended (or closed, or failed). */
  get isEnded(): boolean {
    return this.#isEnded;
  }

  /** One parsed message per line, in order (`{}` for a line that is not a JSON object). */
  get messages(): WireMessage[] {
    return this.lines.map((_, at) => this.#messageAt(at));
  }

  /** The lines not taken yet, in order. */
  get untaken(): string[] {
    return this.lines.filter((_, at) => !this.#taken.has(at));
  }

  /** The exact line a message of {@link LineReader.messages} was parsed from. */
  lineOf(message: WireMessage): string {
    const at = this.#parsed.indexOf(message);
    if (at === -1) throw new Error(`${this.label}: that message was not read from this stream`);
    return this.lines[at]!;
  }

  /** The lines received so far that match, taken or not. */
  matching(match: MessageMatch): string[] {
    return this.lines.filter((line, at) => match(this.#messageAt(at), line));
  }

  /** Calls `listener` with every line received from now on. */
  onLine(listener: (line: string) => void): void {
    this.#listeners.push(listener);
  }

  /** Removes and returns the first line not taken yet that matches (any line by default). */
  take(match: MessageMatch = ANY_LINE, waitMs?: number): Promise<string> {
    let at = this.#firstUntaken;
    return this.#wait(`${describeMatch(match)} to take`, waitMs, () => {
      for (; at < this.lines.length; at++) {
        if (this.#taken.has(at) || !match(this.#messageAt(at), this.lines[at]!)) continue;
        this.#markTaken(at);
        return this.lines[at];
      }
      return undefined;
    });
  }

  /** Takes the next `count` lines not taken yet. */
  async takeLines(count: number): Promise<string[]> {
    const lines: string[] = [];
    while (lines.length < count) lines.push(await this.take());
    return lines;
  }

  /** Takes lines in order up to and including the first that matches. */
  async takeUntil(match: MessageMatch): Promise<string[]> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.take();
      lines.push(line);
      if (match(parseMessage(line), line)) return lines;
    }
  }

  /** Resolves with the first line, received before or after this call, that matches. */
  async find(match: MessageMatch, waitMs?: number): Promise<string> {
    return this.lines[await this.#findIndex(match, waitMs)]!;
  }

  /** Like {@link LineReader.find}, resolving with the parsed message (see {@link LineReader.lineOf}). */
  async findMessage(match: MessageMatch, waitMs?: number): Promise<WireMessage> {
    return this.#messageAt(await this.#findIndex(match, waitMs));
  }

  /**
   * Resolves with {@link LineReader.text} once it matches `pattern`: for text that is not line by
   * line, such as a prompt's words streamed on a terminal or a pattern across lines.
   */
  findText(pattern: RegExp, waitMs?: number): Promise<string> {
    return this.#wait(`text matching ${String(pattern)}`, waitMs, () => {
      const text = this.text;
      return pattern.test(text) ? text : undefined;
    });
  }

  /** The first response to `id`, received before or after this call. */
  response(id: unknown, waitMs?: number): Promise<WireMessage> {
    return this.findMessage(isResponseTo(id), waitMs);
  }

  /** Resolves with every line received once there are at least `count`. */
  waitForLines(count: number, waitMs?: number): Promise<string[]> {
    return this.#wait(`${count} lines`, waitMs, () => (this.lines.length >= count ? this.lines.slice() : undefined));
  }

  /** Resolves with the next `count` lines received after this call. */
  async next(count = 1, waitMs?: number): Promise<string[]> {
    const start = this.lines.length;
    return (await this.waitForLines(start + count, waitMs)).slice(start, start + count);
  }

  /** Resolves once the stream has ended, with the lines not taken. */
  ended(waitMs?: number): Promise<string[]> {
    return this.#wait('the end of the stream', waitMs, () => (this.#isEnded ? this.untaken : undefined));
  }

  #findIndex(match: MessageMatch, waitMs: number | undefined): Promise<number> {
    let at = 0;
    return this.#wait(describeMatch(match), waitMs, () => {
      for (; at < this.lines.length; at++) if (match(this.#messageAt(at), this.lines[at]!)) return at;
      return undefined;
    });
  }

  #messageAt(at: number): WireMessage {
    return (this.#parsed[at] ??= parseMessage(this.lines[at]!));
  }

  #markTaken(at: number): void {
    this.#taken.add(at);
    while (this.#taken.has(this.#firstUntaken)) this.#firstUntaken++;
  }

  #wait<T>(what: string, waitMs = this.#waitMs, check: () => T | undefined): Promise<T> {
    const found = check();
    if (found !== undefined) return Promise.resolve(found);
    if (this.#isEnded) return Promise.reject(this.#failure(`ended without ${what}`));
    return new Promise<T>((resolve, reject) => {
      // Unref'd: a wait a test gave up on never keeps the run alive; mocha's own timer does meanwhile.
      const timer = Number.isFinite(waitMs)
        ? setTimeout(() => waiter.fail(`saw no ${what} within ${waitMs} ms`), waitMs).unref()
        : undefined;
      const settle = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
      };
      const waiter: Waiter = {
        what,
        check: () => {
          const value = check();
          if (value === undefined) return false;
          settle();
          resolve(value);
          return true;
        },
        fail: (reason) => {
          settle();
          reject(this.#failure(reason));
        },
      };
      this.#waiters.add(waiter);
    });
  }

  #failure(reason: string): Error {
    const last = this.lines.slice(-8).map((line) => `\n  ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
    return new Error(`${this.label} ${reason}; its last lines (of ${this.lines.length}):${last.join('') || ' none'}`);
  }

  #push(text: string): void {
    const parts = (this.#rest + text).split('\n');
    this.#rest = parts.pop()!;
    // Every line of the chunk is in before any wait settles: a count-based wait sees them all.
    for (const line of parts) this.lines.push(line);
    for (const line of parts) for (const listener of this.#listeners) listener(line);
    // Even without a complete line: a findText() wait may match the text of a partial one.
    for (const waiter of [...this.#waiters]) waiter.check();
  }

  #end(): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    for (const waiter of [...this.#waiters]) if (!waiter.check()) waiter.fail(`ended without ${waiter.what}`);
  }
}

function describeMatch(match: MessageMatch): string {
  if (match.name) return match.name;
  const source = String(match).replace(/\s+/g, ' ');
  return `a line matching ${source.length > 120 ? `${source.slice(0, 120)}…` : source}`;
}

/** Writes each item as one NDJSON line, all in one write: a string as it is, anything else as JSON. */
export function writeLines(stream: Writable, ...items: unknown[]): void {
  stream.write(items.map((item) => `${typeof item === 'string' ? item : JSON.stringify(item)}\n`).join(''));
}

/**
 * Writes a request line to `output` and resolves with the exact line of its response, taken from
 * `input` (other lines stay there for later takes).
 */
export function requestLine(output: Writable, input: LineReader, id: number | string, method: string, params?: unknown): Promise<string> {
  writeLines(output, params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
  return input.take(isResponseTo(id));
}
