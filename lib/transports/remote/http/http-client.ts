/**
 * The Streamable HTTP client, as the official ACP SDK implements the draft: each message is
 * POSTed; the agent's messages arrive on event streams (the connection's, opened after
 * `initialize`, and one per session, opened before the session's first message is sent).
 *
 * @packageDocumentation
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Duplex } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import type { Connection } from '../../../connection/connection';
import { BACKSLASH, decimalText } from '../../../framing/json-text';
import { HttpStatusError, ResumeFailedError, ServerGoingAwayError } from '../errors';
import { backoffDelay, reconnectSettings, resumableOf, type ReconnectOptions, type ReconnectSettings } from '../resume/resume-options';
import { takeCursor, TakenCursor } from '../resume/frame-cursor';
import {
  EVENT_STREAM_CONTENT_TYPE,
  HEADER_CLIENT_SEQ,
  HEADER_EVENTS_RECEIVED,
  HEADER_HEARTBEAT,
  HEADER_LAST_EVENT_ID,
  HEADER_SESSION_ID,
  JSON_CONTENT_TYPE,
} from './http-protocol';
import { idKey, isRequest, isResponse, parseRouted, resultSessionIdOf, sessionIdOf, type RoutedMessage } from '../routed-message';
import { DEFAULT_MAX_PAYLOAD } from '../limits';
import { destroyAfterRead } from '../going-away';
import { SseParser } from './sse';
import { SilenceWatch } from './http-silence';
import { HEADER_CONNECTION_ID, checkRemoteOptions, pushFrame, remoteConnection, type RemoteConnectionOptions } from '../remote-connection';

/** `"sessionId"`, the key whose presence in an event makes the client route it. */
const SESSION_ID_KEY = Buffer.from('"sessionId"');

/** A resumable client tells the server the last event id of a stream after this many more events of it. */
const EVENTS_ACK_EVERY = 16;

/** POST statuses that mean the whole connection is gone (as in the SDK). */
const CONNECTION_FAILURES = new Set([401, 403, 404, 410]);

/** Options of the client stream. @internal */
export interface HttpClientStreamOptions {
  headers?: Record<string, string>;
  token?: string;
  maxPayload?: number;
  ca?: string | Buffer | (string | Buffer)[];
  rejectUnauthorized?: boolean;
  reconnect?: ReconnectSettings;
}

/** The parts of the server's URL a request names. */
type RequestTarget = Readonly<Pick<RequestOptions, 'protocol' | 'hostname' | 'port' | 'path' | 'auth'>>;

interface HttpResult {
  readonly response: IncomingMessage;
  readonly body: string;
}

/**
 * The client side of one Streamable HTTP connection as a byte stream of NDJSON lines.
 *
 * @remarks
 * Lines written are POSTed one at a time, in order (a cancel never overtakes its request). The
 * first must be an `initialize` request. A POST refused with 401, 403, 404 or 410, a network
 * error, or a failed event stream destroys the stream with the error (an {@link HttpStatusError}
 * for a status); another refused request is answered locally `-32603` with data
 * `{status, body}`, like the SDK. The end of the connection's event stream ends the readable
 * side. Ending the writable side DELETEs the connection and closes every socket.
 *
 * @internal
 */
export class HttpClientStream extends Duplex {
  /** Where each request goes (the URL's parts, taken once: `http.request` would take them from a `URL` on every request). */
  readonly #target: RequestTarget;
  readonly #send: typeof httpRequest;
  readonly #options: HttpClientStreamOptions;
  readonly #agent: HttpAgent;
  readonly #requests = new Set<ClientRequest>();
  /** Gives up the requests of a silent network (a resumable connection: `reconnect.silenceMs`). */
  #silence: SilenceWatch | undefined;
  /** Sessions with an open (or opening) event stream, and when each is ready. */
  readonly #sessions = new Map<string, Promise<void>>();
  /** Agent request id key → the session stream it came on (its answer carries that header). */
  readonly #answerSessions = new Map<string, string>();
  /** Session event streams still open: the readable side ends once they and the connection's have. */
  readonly #sessionStreams = new Set<IncomingMessage>();
  #isConnectionStreamEnded = false;
  /** Set when the server ended a resumable connection (the client did not). */
  #goingAway: ServerGoingAwayError | undefined;
  #connectionId: string | undefined;
  /** Whether the server advertised `transport.resumable` (and `reconnect` is on). */
  #isResumable = false;
  /** The sequence number of the last message POSTed after `initialize`. */
  #seq = 0;
  /** The last cursor received on each event stream ('' for the connection's own). */
  readonly #cursors = new Map<string, number>();
  /** What was taken out of the event received last. */
  readonly #taken = new TakenCursor();
  /** The last event id told to the server, by stream (see {@link HEADER_EVENTS_RECEIVED}). */
  readonly #acknowledged = new Map<string, number>();
  /** Backoff timers of the attempts under way (several streams and a POST may retry at once). */
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Sends a heartbeat when no request went out for a while (see `reconnect.heartbeatMs`). */
  #heartbeat: NodeJS.Timeout | undefined;
  /** Whether a request went out since the heartbeat's last tick. */
  #hasSentSinceBeat = false;
  #partial = '';
  #isReading = true;
  #paused: (() => void)[] = [];

  constructor(url: URL, options: HttpClientStreamOptions) {
    super({ decodeStrings: false, allowHalfOpen: true });
    const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
    this.#target = { protocol, hostname, port, path, auth };
    const isHttps = url.protocol === 'https:';
    this.#send = isHttps ? httpsRequest : httpRequest;
    this.#options = options;
    this.#agent = isHttps
      ? new HttpsAgent({ keepAlive: true, ca: options.ca, rejectUnauthorized: options.rejectUnauthorized })
      : new HttpAgent({ keepAlive: true });
  }

  /** The `Acp-Connection-Id` the server gave, once initialized. */
  get connectionId(): string | undefined {
    return this.#connectionId;
  }

  override _read(): void {
    this.#isReading = true;
    const waiters = this.#paused;
    this.#paused = [];
    for (const resume of waiters) resume();
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const lines = (this.#partial + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'))).split('\n');
    this.#partial = lines.pop()!;
    this.#sendAll(lines.filter((line) => line !== '')).then(
      () => callback(),
      (error: Error) => {
        this.destroy(error);
        callback();
      },
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    // Closing: a stream that ends from now on is not resumed.
    this.#isResumable = false;
    const id = this.#connectionId;
    const done = (): void => {
      this.#shutdown();
      if (!this.readableEnded) this.push(null);
      callback();
    };
    if (id === undefined) return done();
    this.#fetch('DELETE', { [HEADER_CONNECTION_ID]: id }).then(done, done);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#shutdown();
    callback(error);
  }

  #shutdown(): void {
    clearInterval(this.#heartbeat);
    this.#silence?.stop();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const request of this.#requests) request.destroy();
    this.#requests.clear();
    this.#agent.destroy();
  }

  async #sendAll(lines: string[]): Promise<void> {
    for (const line of lines) {
      if (this.destroyed) return;
      const message = parseRouted(line);
      if (message === undefined) continue;
      if (this.#connectionId === undefined) await this.#initialize(message, line);
      else await this.#post(message, line);
    }
  }

  async #initialize(message: RoutedMessage, line: string): Promise<void> {
    if (!isRequest(message) || message.method !== 'initialize') {
      throw new HttpStatusError(0, '', 'the first message over Streamable HTTP must be an initialize request');
    }
    const { response, body } = await this.#fetch('POST', { 'Content-Type': JSON_CONTENT_TYPE }, line, true);
    const id = response.headers[HEADER_CONNECTION_ID.toLowerCase()];
    if (response.statusCode !== 200) throw statusError('initialize', response, body);
    if (typeof id !== 'string' || id === '') throw new HttpStatusError(200, body, 'the initialize answer has no Acp-Connection-Id');
    this.#connectionId = id;
    this.#isResumable = this.#options.reconnect !== undefined && resumableOf(body) !== undefined;
    const heartbeatMs = this.#heartbeatMs;
    if (heartbeatMs > 0) this.#heartbeat = setInterval(() => this.#beat(), heartbeatMs).unref();
    // A resumable connection gives up a request on a silent socket (a dead network) and resumes.
    const silenceMs = this.#isResumable ? (this.#options.reconnect?.silenceMs ?? 0) : 0;
    if (silenceMs > 0) (this.#silence = new SilenceWatch(silenceMs, this.#requests)).start();
    this.#deliver(body);
    void this.#openEvents(undefined);
  }

  async #post(message: RoutedMessage, line: string): Promise<void> {
    const sessionId = sessionIdOf(message) ?? (isResponse(message) ? this.#takeAnswerSession(message.id) : undefined);
    if (sessionId !== undefined) await this.#openEvents(sessionId);
    const headers: OutgoingHttpHeaders = { 'Content-Type': JSON_CONTENT_TYPE, [HEADER_CONNECTION_ID]: this.#connectionId! };
    if (sessionId !== undefined) headers[HEADER_SESSION_ID] = sessionId;
    if (this.#isResumable) {
      headers[HEADER_CLIENT_SEQ] = decimalText(++this.#seq);
      this.#acknowledgeEvents(headers, sessionId ?? '');
    }
    const { response, body } = await this.#retrying(() => this.#fetch('POST', headers, line));
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return;
    // The server no longer holds a resumable connection (its grace ended, it restarted): a refused resume.
    if (status === 404 && this.#isResumable) throw new ResumeFailedError('refused', body);
    if (!CONNECTION_FAILURES.has(status) && isRequest(message)) {
      // Only this request failed: answer it here, the connection goes on.
      const error = { code: -32603, message: `HTTP POST failed: ${status}`, data: { status, body } };
      return this.#deliver(JSON.stringify({ jsonrpc: '2.0', id: message.id, error }));
    }
    throw statusError('POST', response, body);
  }

  /** Adds the last event id of `stream` to a POST's headers once {@link EVENTS_ACK_EVERY} more have come since the last one told. */
  #acknowledgeEvents(headers: OutgoingHttpHeaders, stream: string): void {
    const last = this.#cursors.get(stream);
    if (last === undefined || last - (this.#acknowledged.get(stream) ?? 0) < EVENTS_ACK_EVERY) return;
    headers[HEADER_EVENTS_RECEIVED] = decimalText(last);
    this.#acknowledged.set(stream, last);
  }

  /** The heartbeat interval of a resumable connection, 0 when it sends none. */
  get #heartbeatMs(): number {
    return this.#isResumable ? (this.#options.reconnect?.heartbeatMs ?? 0) : 0;
  }

  /** Sends a heartbeat (an empty POST with `Acp-Heartbeat`) unless a request went out since the last tick. */
  #beat(): void {
    if (this.#hasSentSinceBeat || this.destroyed || !this.#isResumable) {
      this.#hasSentSinceBeat = false;
      return;
    }
    const headers: OutgoingHttpHeaders = { [HEADER_CONNECTION_ID]: this.#connectionId!, [HEADER_HEARTBEAT]: String(this.#heartbeatMs) };
    this.#acknowledgeEvents(headers, '');
    const request = this.#request('POST', headers, (response) => response.resume());
    // A lost heartbeat changes nothing here: the event streams notice a dead network themselves.
    request.on('error', ignore);
    request.end();
    this.#hasSentSinceBeat = false;
  }

  #takeAnswerSession(id: unknown): string | undefined {
    const key = idKey(id);
    const session = key === undefined ? undefined : this.#answerSessions.get(key);
    if (key !== undefined) this.#answerSessions.delete(key);
    return session;
  }

  /** Opens an event stream (the connection's, or a session's); resolves once it is open. */
  #openEvents(sessionId: string | undefined): Promise<void> {
    if (sessionId !== undefined) {
      const open = this.#sessions.get(sessionId);
      if (open) return open;
    }
    // Resumable: a GET cut before its answer is sent again (from the first event: `Last-Event-ID: 0`,
    // as the server may have attached the first one), like a stream that dropped.
    let tries = 0;
    const opened = this.#isResumable
      ? this.#retrying(() => this.#requestEvents(sessionId, tries++ === 0 ? undefined : '0'))
      : this.#requestEvents(sessionId, undefined);
    if (sessionId !== undefined) this.#sessions.set(sessionId, opened);
    opened.catch((error: Error) => this.destroy(error));
    return opened;
  }

  /** Sends the GET of an event stream (resuming after `lastEventId` when given); resolves once it is open. */
  #requestEvents(sessionId: string | undefined, lastEventId: string | undefined): Promise<void> {
    const headers: OutgoingHttpHeaders = { Accept: EVENT_STREAM_CONTENT_TYPE, [HEADER_CONNECTION_ID]: this.#connectionId! };
    if (sessionId !== undefined) headers[HEADER_SESSION_ID] = sessionId;
    if (lastEventId !== undefined) headers[HEADER_LAST_EVENT_ID] = lastEventId;
    if (this.#heartbeatMs > 0) headers[HEADER_HEARTBEAT] = String(this.#heartbeatMs);
    return new Promise<void>((resolve, reject) => {
      const request = this.#request('GET', headers, (response) => {
        if (response.statusCode !== 200) {
          void readText(response).then((body) => reject(statusError('event stream', response, body)));
          return;
        }
        resolve();
        this.#readEvents(response, sessionId);
      });
      request.once('error', reject);
      request.end();
    });
  }

  /**
   * Runs `attempt` again, after a jittered backoff, while it rejects and the connection is
   * resumable, up to `reconnect.attempts` times; then rejects with a {@link ResumeFailedError}.
   * An HTTP 409 (the server no longer holds what was missed) fails at once. With `dropped` (a
   * stream that dropped), the first run already waits its backoff.
   */
  async #retrying<T>(attempt: () => Promise<T>, dropped?: Error): Promise<T> {
    const settings = this.#options.reconnect;
    let error = dropped;
    for (let tries = 0; ; tries++) {
      if (error !== undefined) {
        if (!this.#isResumable || settings === undefined || this.destroyed) throw error;
        if (error instanceof HttpStatusError && error.status === 409) throw new ResumeFailedError('refused', error.body, { cause: error });
        if (tries >= settings.attempts) throw new ResumeFailedError('attempts', error.message, { cause: error });
        const delayMs = backoffDelay(settings, tries + 1);
        settings.onReconnecting({ attempt: tries + 1, delayMs, error });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            this.#timers.delete(timer);
            resolve();
          }, delayMs);
          this.#timers.add(timer);
        });
      }
      try {
        const result = await attempt();
        if (error !== undefined) settings?.onResumed({ attempts: dropped ? tries + 1 : tries, resent: dropped ? 0 : 1 });
        return result;
      } catch (caught) {
        error = caught as Error;
      }
    }
  }

  /** Opens a dropped event stream again after its last cursor; the connection fails when it cannot. */
  #resumeEvents(sessionId: string | undefined): void {
    const lastEventId = String(this.#cursors.get(sessionId ?? '') ?? 0);
    const resumed = this.#retrying(() => {
      if (this.destroyed) return Promise.resolve();
      return this.#requestEvents(sessionId, lastEventId);
    }, new Error('the event stream dropped'));
    if (sessionId !== undefined) this.#sessions.set(sessionId, resumed);
    resumed.catch((error: Error) => this.destroy(error));
  }

  #readEvents(response: IncomingMessage, sessionId: string | undefined): void {
    const maxPayload = this.#options.maxPayload ?? DEFAULT_MAX_PAYLOAD;
    const parser = new SseParser(
      maxPayload,
      (data) => this.#onEvent(data, sessionId),
      () => {
        this.destroy(new HttpStatusError(200, '', `an event was larger than maxPayload (${maxPayload} bytes)`));
      },
    );
    response.on('data', (chunk: Buffer) => {
      parser.write(chunk);
      if (!this.#isReading) {
        response.pause();
        this.#paused.push(() => response.resume());
      }
    });
    if (sessionId !== undefined) {
      this.#sessionStreams.add(response);
      response.once('close', () => {
        this.#sessionStreams.delete(response);
        this.#endIfStreamsEnded();
      });
    }
    let hasEnded = false;
    response.once('end', () => {
      hasEnded = true;
      if (sessionId === undefined) {
        this.#isConnectionStreamEnded = true;
        // A resumable connection ends only by our DELETE or the server ending it: a drain, a shutdown, its agent ending.
        if (this.#isResumable) this.#goingAway = new ServerGoingAwayError(undefined, 'the server ended the event stream');
        this.#endIfStreamsEnded();
      } else {
        this.#sessions.delete(sessionId);
      }
    });
    response.once('error', (error) => {
      if (!this.#isResumable) this.destroy(error);
    });
    // A stream cut without its end (a reset, a dropped network) is resumed after its last event.
    response.once('close', () => {
      if (!hasEnded && this.#isResumable && !this.destroyed) this.#resumeEvents(sessionId);
    });
  }

  /**
   * Ends the readable side once the connection's event stream has ended and no session's is
   * open: a server closing the connection writes a session's last answers, then ends every stream,
   * but the streams are separate HTTP responses (through a load balancer, separate connections),
   * so the connection's end may arrive before a session's last events.
   */
  #endIfStreamsEnded(): void {
    if (!this.#isConnectionStreamEnded || this.#sessionStreams.size > 0) return;
    if (this.readableEnded || this.destroyed) return;
    if (this.#goingAway) destroyAfterRead(this, this.#goingAway);
    else this.push(null);
  }

  /** Takes one event's data (a view of the bytes received: taking the cursor out changes them in place). */
  #onEvent(data: Buffer, sessionId: string | undefined): void {
    let frame = data;
    if (this.#isResumable) {
      // The cursor is taken out of the frame the connection reads.
      const taken = this.#taken;
      takeCursor(frame, taken);
      if (this.#isReplayed(taken.cursor, sessionId ?? '')) return;
      if (taken.start > 0) frame = frame.subarray(taken.start);
    }
    // Routing reads a session stream's requests, and answers that carry a `sessionId` (whose key is
    // in the text as such unless it is escaped): any other event goes to the connection unparsed.
    const isRouted = sessionId !== undefined || frame.indexOf(SESSION_ID_KEY) !== -1 || frame.indexOf(BACKSLASH) !== -1;
    const message = isRouted ? parseRouted(frame.toString('utf8')) : undefined;
    if (message !== undefined) {
      const created = resultSessionIdOf(message);
      // Open a new session's stream at once, so that its first updates are not held on the server.
      if (created !== undefined) void this.#openEvents(created);
      if (sessionId !== undefined && isRequest(message)) {
        const key = idKey(message.id);
        if (key !== undefined) this.#answerSessions.set(key, sessionId);
      }
    }
    this.#deliverFrame(frame);
  }

  /** Whether an event whose cursor is `n` is one already received on its stream (its cursor is not after the last one). */
  #isReplayed(n: number | undefined, stream: string): boolean {
    if (n === undefined) return false;
    const last = this.#cursors.get(stream);
    if (last !== undefined && n <= last) return true;
    this.#cursors.set(stream, n);
    return false;
  }

  #deliver(text: string): void {
    this.#deliverFrame(Buffer.from(text, 'utf8'));
  }

  #deliverFrame(frame: Buffer): void {
    if (this.destroyed || this.readableEnded) return;
    if (!pushFrame(this, frame)) this.#isReading = false;
  }

  /**
   * Sends one request and resolves once its response has been read: with its body when
   * `isBodyNeeded` or the status is not 2xx, else with `''` (the body, if any, is drained unread).
   */
  #fetch(method: string, headers: OutgoingHttpHeaders, body?: string, isBodyNeeded = false): Promise<HttpResult> {
    return new Promise((resolve, reject) => {
      const request = this.#request(method, headers, (response) => {
        const status = response.statusCode ?? 0;
        if (isBodyNeeded || status < 200 || status >= 300) return void readText(response).then((text) => resolve({ response, body: text }));
        response.once('end', () => resolve({ response, body: '' }));
        response.once('close', () => resolve({ response, body: '' }));
        response.resume();
      });
      request.once('error', reject);
      request.end(body);
    });
  }

  #request(method: string, headers: OutgoingHttpHeaders, onResponse: (response: IncomingMessage) => void) {
    const all: OutgoingHttpHeaders = { ...this.#options.headers, ...headers };
    if (this.#options.token !== undefined) all.Authorization = `Bearer ${this.#options.token}`;
    const { protocol, hostname, port, path, auth } = this.#target;
    const request = this.#send({ protocol, hostname, port, path, auth, method, headers: all, agent: this.#agent }, onResponse);
    this.#hasSentSinceBeat = true;
    this.#requests.add(request);
    request.once('close', () => this.#requests.delete(request));
    return request;
  }
}

function statusError(what: string, response: IncomingMessage, body: string): HttpStatusError {
  return new HttpStatusError(response.statusCode ?? 0, body, `the server refused the ${what}: ${response.statusCode} ${body}`.trim());
}

/** A response's text, cut to 64 MiB; never rejects. */
function readText(response: IncomingMessage, limit = DEFAULT_MAX_PAYLOAD): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk);
      size += chunk.length;
    });
    response.once('end', done);
    response.once('error', done);
    response.once('close', done);
  });
}

/** Options of {@link connectHttp}. */
export interface ConnectHttpOptions extends Omit<RemoteConnectionOptions, 'heartbeat'> {
  /** Extra headers of every request. */
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>` on every request. */
  token?: string;
  /** `https://`: certificate authorities to trust instead of the system's. */
  ca?: string | Buffer | (string | Buffer)[];
  /** `https://`: whether to check the server's certificate. Default `true`. */
  rejectUnauthorized?: boolean;
  /**
   * Resumes by itself, if the server advertised `transport.resumable` in its `initialize` answer:
   * a dropped event stream is opened again with `Last-Event-ID`, a POST that failed on the network
   * is sent again (stamped `Acp-Client-Seq`, so the server applies it once), each after a jittered
   * exponential backoff, up to `attempts` times; a 409, a POST answered 404 (the server no longer
   * holds the connection) or the last failed attempt closes the connection with a
   * `ResumeFailedError`. Once resumable, the server ending the connection's
   * event stream (a drain, a shutdown, its agent ending) closes the connection with a
   * `ServerGoingAwayError`, after every message received before. `true`: the defaults. Default off.
   */
  reconnect?: ReconnectOptions | boolean;
}

/**
 * A {@link Connection} to a Streamable HTTP server (`http://` or `https://`), as the official
 * ACP SDK's `createHttpStream` speaks it.
 *
 * @remarks
 * Nothing is sent until the first request, which must be `initialize`: its POST opens the
 * connection on the server. Messages are POSTed one at a time in order; the agent's arrive on
 * event streams. A refusal (401 token, 403 origin, 404 unknown connection) or a network failure
 * closes the connection (`'input error'`, the {@link HttpStatusError} or network error as the
 * cause of every pending request's `ConnectionClosedError`). `close()` DELETEs the connection.
 * @throws TypeError or RangeError for an invalid URL or option
 * @example
 * ```ts
 * const connection = connectHttp('http://127.0.0.1:4000/acp');
 * console.log(await connection.sendRequest('initialize', { protocolVersion: 2 }));
 * await connection.close();
 * ```
 */
export function connectHttp(url: string | URL, options: ConnectHttpOptions = {}): Connection {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new TypeError(`url must be http:// or https://, got ${target.protocol}`);
  checkRemoteOptions(options);
  const stream = new HttpClientStream(target, { ...options, reconnect: reconnectSettings(options.reconnect) });
  return remoteConnection(stream, options);
}

function ignore(): void {}
