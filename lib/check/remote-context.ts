/**
 * What a remote check runs with (`--url`): the server's URL and transport, the bounds of the run,
 * the connections it opened (the shared, initialized one, and each check's own), and the steps
 * most checks share (open a connection and initialize it).
 *
 * @packageDocumentation
 */
import type { JsonObject } from '../jsonrpc/message';
import { initializeParams } from './context';
import { CheckFailure, fail } from './outcome';
import { type HttpAnswer, type HttpCall, httpCall } from './remote-http';
import { HttpLink, type RemoteLink, WsLink } from './remote-link';
import { RULES } from './rules';
import { AcpSchema } from './schema';
import type { RunBounds, RunContext } from './runner';
import { type LineDirection, type LinePlace, readWireLine, shortText, type WireLine } from './wire-line';

/** The bounds and target of a remote run. */
export interface RemoteSettings extends RunBounds {
  readonly url: URL;
  /** `websocket` for `ws:`/`wss:` URLs, `http` for `http:`/`https:`. */
  readonly transport: 'websocket' | 'http';
  /** The server's token (`Authorization: Bearer`); `remote.auth` is n/a without. */
  readonly token?: string;
  /** How many clients the server serves at once; `remote.capacity` is n/a without. */
  readonly maxClients?: number;
}

/** An initialized connection: the link and the `initialize` answer. */
export interface OpenedLink {
  readonly link: RemoteLink;
  readonly answer: WireLine;
}

/** The raw HTTP exchanges of a run (outside any connection), recorded as lines: each body sent and received, each status. */
class ExchangeLog {
  readonly transcript: WireLine[] = [];
  readonly #place: () => LinePlace;
  readonly #clock: () => number;
  readonly #onLine: ((line: WireLine) => void) | undefined;

  constructor(place: () => LinePlace, clock: () => number, onLine: ((line: WireLine) => void) | undefined) {
    this.#place = place;
    this.#clock = clock;
    this.#onLine = onLine;
  }

  record(text: string, direction: LineDirection): WireLine {
    const line = readWireLine(Buffer.from(text, 'utf8'), this.#clock(), { ...this.#place(), direction });
    this.transcript.push(line);
    this.#onLine?.(line);
    return line;
  }
}

/** A raw HTTP exchange as recorded: the answer, and the lines that show it. */
export interface Exchange extends HttpAnswer {
  readonly lines: WireLine[];
}

/** The state of a remote run, and what each check is given. */
export class RemoteContext implements RunContext {
  readonly settings: RemoteSettings;
  /** Every connection the run opened, in order. */
  readonly links: RemoteLink[] = [];
  /** What one check leaves for another. */
  readonly memo = new Map<string, unknown>();
  readonly schema = new AcpSchema();
  readonly #clock: () => number;
  readonly #onLine: ((line: WireLine) => void) | undefined;
  #check = 'preflight';
  #nextId = 0;
  #shared: Promise<OpenedLink> | undefined;
  #sharedLink: RemoteLink | undefined;
  #own: RemoteLink[] = [];
  readonly #exchanges: ExchangeLog;

  constructor(settings: RemoteSettings, clock: () => number, onLine?: (line: WireLine) => void) {
    this.settings = settings;
    this.#clock = clock;
    this.#onLine = onLine;
    this.#exchanges = new ExchangeLog(() => ({ process: 'http', check: this.#check, direction: 'event' }), clock, onLine);
  }

  get participants(): readonly { readonly transcript: readonly WireLine[] }[] {
    return [...this.links, this.#exchanges];
  }

  /**
   * One raw HTTP request outside any connection (with the run's token unless `headers` name
   * `authorization`), recorded: its body (out), its status (an event), the answer's body (in).
   *
   * @throws Error (rejects) on a network error or without an answer within the timeout
   */
  async exchange(url: URL, call: HttpCall): Promise<Exchange> {
    const log = this.#exchanges;
    const lines = [log.record(`${call.method} ${url.pathname}`, 'event')];
    if (call.body !== undefined) lines.push(log.record(call.body, 'out'));
    const answer = await httpCall(url, call, this.settings.timeoutMs);
    lines.push(
      log.record(
        `${answer.status}${answer.headers['retry-after'] === undefined ? '' : ` Retry-After: ${String(answer.headers['retry-after'])}`}`,
        'event',
      ),
    );
    if (answer.body !== '') lines.push(log.record(answer.body, 'in'));
    return { ...answer, lines };
  }

  beginCheck(id: string): void {
    this.#check = id;
  }

  async enterGroup(): Promise<void> {
    // One group: the shared connection serves every check.
  }

  hurry(): void {
    // Connections close at once.
  }

  /**
   * A new connection (not opened) with `token` (the run's by default; `null`: none); the check's
   * own: closed when it ends.
   */
  newLink(token: string | null = this.settings.token ?? null): RemoteLink {
    const options = {
      url: this.settings.url,
      token: token ?? undefined,
      timeoutMs: this.settings.timeoutMs,
      label: `remote-${this.links.length + 1}`,
      clock: this.#clock,
      checkOf: () => this.#check,
      onLine: this.#onLine,
      nextId: () => ++this.#nextId,
    };
    const link = this.settings.transport === 'websocket' ? new WsLink(options) : new HttpLink(options);
    this.links.push(link);
    this.#own.push(link);
    return link;
  }

  /**
   * A new connection, opened and initialized (the check's own).
   *
   * @throws CheckFailure when the server refuses it or does not answer `initialize` with a result
   */
  async open(): Promise<OpenedLink> {
    return this.initializeLink(this.newLink());
  }

  /** The shared connection, opened and initialized on first use (by the preflight). @throws CheckFailure as {@link RemoteContext.open} */
  link(): Promise<OpenedLink> {
    if (!this.#shared) {
      const link = this.newLink();
      this.#own = this.#own.filter((other) => other !== link);
      this.#sharedLink = link;
      this.#shared = this.initializeLink(link);
    }
    return this.#shared;
  }

  /** The shared connection's link, opened or not (undefined before {@link RemoteContext.link}). */
  get sharedLink(): RemoteLink | undefined {
    return this.#sharedLink;
  }

  /**
   * Opens `link` (a WebSocket upgrade) and initializes it (over HTTP, the `initialize` POST opens
   * it), then opens an HTTP connection's event stream.
   *
   * @throws CheckFailure when the server refuses it or does not answer `initialize` with a result
   * (`link.opening` then says how it was refused)
   */
  async initializeLink(link: RemoteLink): Promise<OpenedLink> {
    if (link instanceof WsLink) {
      const opening = await link.open();
      if (opening.status !== 101)
        throw new CheckFailure(fail(`the WebSocket upgrade was refused: ${opening.status} ${shortText(opening.body)}`));
    }
    const sent = link.request('initialize', initializeParams(2));
    const answer = await link.answer(sent, this.settings.timeoutMs);
    if (link instanceof HttpLink && link.openingError) throw link.openingError;
    if (!answer) {
      const status =
        link.opening && link.opening.status !== 200 && link.opening.status !== 101
          ? `: ${link.opening.status} ${shortText(link.opening.body)}`
          : '';
      throw new CheckFailure(fail(`no answer to initialize within ${this.settings.timeoutMs} ms${status}`, RULES.alwaysAnswered));
    }
    if ((answer.message?.result as JsonObject | undefined) === undefined)
      throw new CheckFailure(fail(`initialize was answered with an error: ${shortText(answer.text)}`));
    if (link instanceof HttpLink && link.connectionId !== undefined) await link.openStream();
    return { link, answer };
  }

  async closeOwn(): Promise<void> {
    const own = this.#own;
    this.#own = [];
    await Promise.all(own.map((link) => link.close()));
  }

  async closeShared(): Promise<void> {
    // The shared connection lives for the whole run: {@link RemoteContext.closeAll} ends it.
  }

  async closeAll(): Promise<void> {
    this.#own = [];
    await Promise.all(this.links.map((link) => link.close()));
  }
}
