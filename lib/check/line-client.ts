/**
 * A raw line client: writes the exact bytes of each line it sends, keeps every line it receives
 * without hiding anything (non-JSON lines, answers to nothing, duplicate answers), matches answers
 * to requests by the text of their id, answers the peer's own requests, and records everything, in
 * and out, in a transcript. What carries the lines is a subclass's: a process's stdio
 * (`AgentProcess`), a WebSocket or Streamable HTTP (`RemoteLink`).
 *
 * @packageDocumentation
 */
import { encodeJson } from '../framing/ndjson';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import { AgentRequests } from './agent-requests';
import { LineSplitter } from './line-splitter';
import { idKey, isResponseLine, type LineDirection, readWireLine, type WireLine } from './wire-line';

/** Where a line client's lines are reported, and how it numbers its requests. */
export interface LineClientOptions {
  /** The participant's name in the run (`agent-3`, `remote-1`), for {@link WireLine.process}. */
  readonly label: string;
  /** Milliseconds since the run began, for {@link WireLine.at}. */
  readonly clock: () => number;
  /** The id of the check under way, for {@link WireLine.check}. */
  readonly checkOf: () => string;
  /** Called with every line in, out and on stderr, and every event, as it happens (the evidence trace). */
  readonly onLine?: (line: WireLine) => void;
  /** The next request id of the run (ids are unique across the run's participants). */
  readonly nextId: () => number;
}

/** A request the check sent, and its answers. */
export interface SentLine {
  /** The id's text as written. */
  readonly rawId: string;
  readonly method: string;
  /** Every answer received for it, in order (more than one breaks JSON-RPC). */
  readonly answers: WireLine[];
  /** The line as written, once its `\n` has been (for evidence). */
  line?: WireLine;
}

type Waiter = { matches: (line: WireLine) => boolean; resolve: (line: WireLine | undefined) => void };

/** The line-level client of one participant of a run; a subclass carries its bytes. */
export abstract class LineClient {
  /** Every line received, in order. */
  readonly lines: WireLine[] = [];
  /** Every line in, out and on stderr, and every event, in order. */
  readonly transcript: WireLine[] = [];
  /** Responses that answer no request the check sent (or carry no id). */
  readonly strays: WireLine[] = [];
  /** Requests the check sent, by {@link idKey} of their id. */
  readonly sent = new Map<string, SentLine>();
  /**
   * Answers a request the peer sent before the default answers do (a permission granted, else
   * `-32601`): returns true when it handled it (answered, or keeps it to answer later).
   */
  requestHandler: ((line: WireLine) => boolean) | undefined;
  readonly #options: LineClientOptions;
  readonly #requests: AgentRequests;
  readonly #out = new LineSplitter();
  #waiters: Waiter[] = [];
  #isOutputEnded = false;

  protected constructor(options: LineClientOptions) {
    this.#options = options;
    this.#requests = new AgentRequests((line) => this.writeLine(line));
  }

  /** Carries `bytes` (whole lines, each ended by `\n`, or pieces of them) to the peer; false when it cannot any more. */
  protected abstract transmit(bytes: Buffer): boolean;

  /** Whether nothing more will be received. */
  get isOutputEnded(): boolean {
    return this.#isOutputEnded;
  }

  /** Writes `text` as it is (no newline added); returns the lines it completed (each recorded as written). */
  writeRaw(text: string | Buffer): WireLine[] {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    if (!this.transmit(bytes)) return [];
    return this.#out.push(bytes).map((line) => this.record(line, 'out'));
  }

  /** Writes one JSON message and its `\n`; returns the line as written. */
  writeLine(message: JsonObject): WireLine | undefined {
    return this.writeRaw(`${encodeJson(message)}\n`)[0];
  }
  /**
   * Sends a request; `rawId` (the id's JSON text, written as is) defaults to the run's next number.
   * `terminator` ends the line (`\n`; `\r\n` to check that CRLF is tolerated).
   */
  request(method: string, params?: JsonValue, rawId?: string, terminator = '\n'): SentLine {
    const id = rawId ?? String(this.#options.nextId());
    const members = params === undefined ? '' : `,"params":${encodeJson(params)}`;
    const text = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${members}}`;
    const sent = this.track(id, method);
    sent.line = this.writeRaw(`${text}${terminator}`)[0];
    return sent;
  }

  /**
   * Registers a request the caller writes itself (with {@link LineClient.writeRaw}, in pieces if
   * it likes): `rawId` is its id's text.
   */
  track(rawId: string, method: string): SentLine {
    const sent: SentLine = { rawId, method, answers: [] };
    this.sent.set(idKey(rawId), sent);
    return sent;
  }

  /** Answers the request of the process whose id's text is `rawId` (written as it is) with a result or an error object. */
  respond(rawId: string, outcome: { result: JsonValue } | { error: JsonObject }): WireLine | undefined {
    return this.writeRaw(`{"jsonrpc":"2.0","id":${rawId},${encodeJson(outcome).slice(1)}\n`)[0];
  }

  /** Sends a notification; returns the line as written. */
  notify(method: string, params?: JsonValue): WireLine | undefined {
    return this.writeLine(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /** Resolves with the first answer to `sent` (one received already, or the next), or `undefined` after `ms`. */
  answer(sent: SentLine, ms: number): Promise<WireLine | undefined> {
    if (sent.answers.length > 0) return Promise.resolve(sent.answers[0]);
    const key = idKey(sent.rawId);
    return this.nextLine((line) => isResponseLine(line) && line.rawId !== undefined && idKey(line.rawId) === key, ms);
  }

  /** Sends a request and waits for its answer (`undefined`: none within `ms`). */
  async call(method: string, params: JsonValue | undefined, ms: number): Promise<WireLine | undefined> {
    return this.answer(this.request(method, params), ms);
  }

  /**
   * Resolves with the first line received since `lines[from]` that `matches` (one received already,
   * or the next), or `undefined` after `ms` or once nothing more can come.
   */
  lineAfter(from: number, matches: (line: WireLine) => boolean, ms: number): Promise<WireLine | undefined> {
    const found = this.lines.slice(from).find(matches);
    return found ? Promise.resolve(found) : this.nextLine(matches, ms);
  }

  /** Resolves with the next line received that `matches`, or `undefined` after `ms` or once nothing more can come. */
  nextLine(matches: (line: WireLine) => boolean, ms: number): Promise<WireLine | undefined> {
    if (this.#isOutputEnded) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        matches,
        resolve: (line) => {
          clearTimeout(timer);
          this.#waiters = this.#waiters.filter((other) => other !== waiter);
          resolve(line);
        },
      };
      const timer = setTimeout(() => waiter.resolve(undefined), ms);
      this.#waiters.push(waiter);
    });
  }

  /** Takes one received line (its bytes without the `\n`): recorded, matched to its request, and answered when it is a request. */
  protected receive(bytes: Buffer): WireLine {
    const line = this.record(bytes, 'in');
    this.lines.push(line);
    if (isResponseLine(line)) this.#onResponse(line);
    else if (line.message !== undefined && typeof line.message.method === 'string' && line.message.id !== undefined) {
      if (!this.requestHandler?.(line)) this.#requests.answer(line.message);
    }
    for (const waiter of [...this.#waiters]) if (waiter.matches(line)) waiter.resolve(line);
    return line;
  }

  /** Nothing more will be received: every wait for a line ends now. */
  protected endOutput(note: string): void {
    if (this.#isOutputEnded) return;
    this.#isOutputEnded = true;
    this.note(note);
    for (const waiter of [...this.#waiters]) waiter.resolve(undefined);
  }

  /** Records one line of `direction` (its bytes without the `\n`) in the transcript, and reports it. */
  protected record(bytes: Buffer, direction: LineDirection): WireLine {
    const { label, clock, checkOf, onLine } = this.#options;
    const line = readWireLine(bytes, clock(), { direction, process: label, check: checkOf() });
    this.transcript.push(line);
    onLine?.(line);
    return line;
  }

  /** Records an event (started, stdout ended, exited, connected, …). */
  protected note(text: string): void {
    this.record(Buffer.from(text, 'utf8'), 'event');
  }

  #onResponse(line: WireLine): void {
    const sent = line.rawId === undefined ? undefined : this.sent.get(idKey(line.rawId));
    if (sent) sent.answers.push(line);
    else this.strays.push(line);
  }
}

/** The `params` of a line's message, as an object (empty when absent). */
export function paramsOf(line: WireLine): JsonObject {
  const params = line.message?.params;
  return isJsonObject(params) ? params : {};
}
