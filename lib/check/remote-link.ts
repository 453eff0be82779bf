/**
 * `--url`: one connection to a remote ACP server as a raw line client ({@link LineClient}), over
 * WebSocket (a text frame per message) or Streamable HTTP as the RFD and the SDK speak it (a POST
 * per message, the `initialize` answer in its body with `Acp-Connection-Id`, everything else on
 * the connection's event stream). How each step went (the upgrade, each POST's status) is
 * recorded as an event.
 *
 * @packageDocumentation
 */
import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';
import { HEADER_LAST_EVENT_ID } from '../transports/remote/http/http-protocol';
import { HEADER_CONNECTION_ID } from '../transports/remote/remote-connection';
import { LineClient, type LineClientOptions } from './line-client';
import { LineSplitter } from './line-splitter';
import { type EventStream, httpCall, openEventStream } from './remote-http';

/** Where a link goes, and how. */
export interface RemoteLinkOptions extends LineClientOptions {
  readonly url: URL;
  /** Sent as `Authorization: Bearer <token>` (none without). */
  readonly token?: string;
  /** How long opening (the upgrade, a POST, the event stream's head) may take. */
  readonly timeoutMs: number;
}

/** How opening a link went: the status and headers of the upgrade or `initialize` POST. */
export interface LinkOpening {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Authorization (when there is a token), then `extra`. */
export function authHeaders(token: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return token === undefined ? extra : { authorization: `Bearer ${token}`, ...extra };
}

/** A connection to a remote server, over WebSocket or Streamable HTTP. */
export abstract class RemoteLink extends LineClient {
  /** The connection's id (`Acp-Connection-Id`), once the server named it. */
  connectionId: string | undefined;
  /** How the link was opened (status, headers), once it was. */
  opening: LinkOpening | undefined;
  protected readonly options: RemoteLinkOptions;

  protected constructor(options: RemoteLinkOptions) {
    super(options);
    this.options = options;
  }

  /** Records an event of the link. */
  noteEvent(text: string): void {
    this.note(text);
  }

  /** Cuts the connection's transport as a dropped network would (no close frame, no `DELETE`): the server may keep the connection for a resume. */
  abstract drop(): void;

  /** Ends the connection as a client that leaves does (WebSocket close 1000, HTTP `DELETE`). */
  abstract close(): Promise<void>;
}

/** A connection over WebSocket: each line sent is a text frame, each frame received a line. */
export class WsLink extends RemoteLink {
  #ws: WebSocket | undefined;
  readonly #frames = new LineSplitter();

  constructor(options: RemoteLinkOptions) {
    super(options);
  }

  /**
   * Opens the socket (`headers` added to the upgrade); resolves with how the upgrade went (101, or
   * the refusal's status, headers and body).
   *
   * @throws Error (rejects) on a network error or when the upgrade takes longer than the timeout
   */
  open(headers: Record<string, string> = {}): Promise<LinkOpening> {
    const { url, token, timeoutMs } = this.options;
    const ws = new WebSocket(url, { headers: authHeaders(token, headers), handshakeTimeout: timeoutMs, perMessageDeflate: false });
    this.#ws = ws;
    return new Promise((resolve, reject) => {
      ws.once('upgrade', (response) => (this.opening = { status: response.statusCode ?? 0, headers: response.headers, body: '' }));
      ws.once('unexpected-response', (_request, response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => {
          this.opening = { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') };
          this.noteEvent(`upgrade refused: ${this.opening.status}`);
          ws.terminate();
          resolve(this.opening);
        });
      });
      ws.once('open', () => {
        const id = this.opening?.headers[HEADER_CONNECTION_ID.toLowerCase()];
        this.connectionId = typeof id === 'string' ? id : undefined;
        this.noteEvent(
          `upgraded: ${this.opening?.status}${this.connectionId === undefined ? '' : ` ${HEADER_CONNECTION_ID}: ${this.connectionId}`}`,
        );
        ws.on('message', (data: Buffer) => this.receive(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)));
        ws.once('close', (code) => this.endOutput(`closed: ${code}`));
        resolve(this.opening!);
      });
      ws.once('error', (error) => (this.opening ? this.endOutput(`error: ${error.message}`) : reject(error)));
    });
  }

  protected transmit(bytes: Buffer): boolean {
    const ws = this.#ws;
    if (ws?.readyState !== WebSocket.OPEN) return false;
    for (const frame of this.#frames.push(bytes)) ws.send(frame.toString('utf8'));
    return true;
  }

  drop(): void {
    this.#ws?.terminate();
  }

  async close(): Promise<void> {
    const ws = this.#ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.close(1000);
    const timer = setTimeout(() => ws.terminate(), this.options.timeoutMs);
    await closed;
    clearTimeout(timer);
  }
}

/** A connection over Streamable HTTP as the RFD and the SDK speak it. */
export class HttpLink extends RemoteLink {
  #stream: EventStream | undefined;
  readonly #posts = new LineSplitter();
  #queue: Promise<void> = Promise.resolve();
  #isClosed = false;
  /** The status of each POST after the first (`initialize`), in order. */
  readonly statuses: number[] = [];
  /** Why the first POST got no answer at all (a network error), if it did not. */
  openingError: Error | undefined;

  constructor(options: RemoteLinkOptions) {
    super(options);
  }

  /** The headers of every request after `initialize`: its connection (and authorization). */
  connectionHeaders(extra: Record<string, string> = {}): Record<string, string> {
    return authHeaders(
      this.options.token,
      this.connectionId === undefined ? extra : { [HEADER_CONNECTION_ID]: this.connectionId, ...extra },
    );
  }

  /**
   * Opens the connection's event stream (again, with `lastEventId`: a resume); resolves with its status and headers.
   *
   * @throws Error (rejects) on a network error or without an answer in time
   */
  async openStream(lastEventId?: string): Promise<EventStream> {
    const headers = this.connectionHeaders(lastEventId === undefined ? {} : { [HEADER_LAST_EVENT_ID]: lastEventId });
    const stream = await openEventStream(this.options.url, headers, this.options.timeoutMs, (data) => this.receive(data));
    this.noteEvent(`GET event stream${lastEventId === undefined ? '' : ` (${HEADER_LAST_EVENT_ID}: ${lastEventId})`}: ${stream.status}`);
    if (stream.status === 200) this.#stream = stream;
    return stream;
  }

  protected transmit(bytes: Buffer): boolean {
    if (this.#isClosed) return false;
    for (const line of this.#posts.push(bytes)) this.#queue = this.#queue.then(() => this.#post(line.toString('utf8')));
    return true;
  }

  /** Resolves once every POST sent so far has been answered. */
  get posted(): Promise<void> {
    return this.#queue;
  }

  /** POSTs one message: the first opens the connection (its answer is the body), the others are answered 202 and their answers come on the event stream. */
  async #post(body: string): Promise<void> {
    const isOpening = this.opening === undefined;
    const headers = this.connectionHeaders({ 'content-type': 'application/json' });
    try {
      const answer = await httpCall(this.options.url, { method: 'POST', headers, body }, this.options.timeoutMs);
      if (isOpening) return this.#opened(answer);
      this.statuses.push(answer.status);
      if (answer.status !== 202) this.noteEvent(`POST answered ${answer.status}: ${answer.body.slice(0, 200)}`);
    } catch (error) {
      this.noteEvent(`POST failed: ${(error as Error).message}`);
      if (!isOpening) return void this.statuses.push(0);
      this.openingError = error as Error;
      this.endOutput('not connected');
    }
  }

  #opened(answer: { status: number; headers: IncomingHttpHeaders; body: string }): void {
    this.opening = answer;
    const id = answer.headers[HEADER_CONNECTION_ID.toLowerCase()];
    this.connectionId = typeof id === 'string' ? id : undefined;
    this.noteEvent(
      `POST initialize: ${answer.status}${this.connectionId === undefined ? '' : ` ${HEADER_CONNECTION_ID}: ${this.connectionId}`}`,
    );
    if (answer.status === 200 && answer.body !== '') this.receive(Buffer.from(answer.body, 'utf8'));
    // Refused: no answer will come, on no stream.
    else this.endOutput(`refused: ${answer.status}`);
  }

  drop(): void {
    this.#stream?.drop();
    this.#stream = undefined;
  }

  async close(): Promise<void> {
    if (this.#isClosed) return;
    this.#isClosed = true;
    await this.#queue;
    this.drop();
    if (this.connectionId === undefined) return;
    await httpCall(this.options.url, { method: 'DELETE', headers: this.connectionHeaders() }, this.options.timeoutMs).catch(
      () => undefined,
    );
    this.endOutput('deleted');
  }
}
