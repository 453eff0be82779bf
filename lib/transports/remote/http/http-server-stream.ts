/**
 * One Streamable HTTP connection on the server, as a byte stream of NDJSON lines: POSTed messages
 * come out of its readable side; the lines written to it are routed to the client's event
 * streams (the connection's own, or a session's) and to the POSTs that wait for their answer
 * (the `initialize` POST, or every request's POST when the connection id is in the path).
 *
 * @packageDocumentation
 */
import type { ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { decimalText } from '../../../framing/json-text';
import { AcpWireError } from '../../../jsonrpc/errors';
import { EVENT_STREAM_CONTENT_TYPE, HEARTBEAT_MISSES } from './http-protocol';
import { idKey, isResponse, parseRouted, resultSessionIdOf, sessionIdOf, type RoutedMessage } from '../routed-message';
import { DEFAULT_HTTP_IDLE_TIMEOUT_MS, IdleWatch } from './http-idle';
import { SSE_KEEP_ALIVE, sseEvent } from './sse';
import { ReplayBuffer } from '../resume/replay-buffer';
import type { ResumeSettings } from '../resume/resume-options';
import { stampCursor } from '../resume/stream-cursor';
import { pushFrame } from '../remote-connection';

/** Limits of a Streamable HTTP server's connections. */
export interface HttpServerLimits {
  /** Outgoing bytes held for a client that has not read them yet, all its streams together. Default 64 MiB. */
  maxBufferedBytes?: number;
  /** A client that takes none of its held output for this long is disconnected. Default 60,000 ms. */
  maxOutputStallMs?: number;
  /**
   * A connection with no event stream open, no POST in progress and no `initialize` awaiting its
   * answer for this long is abandoned: the server closes it, as a `DELETE` would (and
   * `acp-wire serve` ends its agent). Milliseconds; `0` never closes one. Default 60,000.
   */
  httpIdleTimeoutMs?: number;
}

/** The client read none of its output within `maxOutputStallMs`; its connection was closed. */
export class OutputStalledError extends AcpWireError {
  /** Always `'OutputStalledError'`. */
  override readonly name = 'OutputStalledError';
  /** Always `'ACP_WIRE_OUTPUT_STALLED'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_OUTPUT_STALLED';
  /** @param stallMs - the `maxOutputStallMs` limit the client exceeded */
  constructor(
    readonly stallMs: number,
    options?: ErrorOptions,
  ) {
    super(`the client took none of its output for ${stallMs} ms`, options);
  }
}

const KEEP_ALIVE_MS = 15_000;

/** Where the answer to one client request goes instead of an event stream: the body of its POST's response. */
export interface BodyReply {
  /** Sends the answer line; returns false when the POST is gone (the answer then goes to the connection's event stream). */
  deliver(line: string): boolean;
  /** The connection ended before the answer. */
  fail(): void;
}

/** How a connection's agent messages are spread over event streams. */
export interface HttpServerStreamOptions extends HttpServerLimits {
  /**
   * Whether a message naming a session (`params.sessionId`) goes to that session's stream (true,
   * the default, as the SDK) or to the connection's one stream (false).
   */
  hasSessionStreams?: boolean;
  /** Resumable event streams: cursors, replay buffers, `Last-Event-ID` (the idle timeout is then `graceMs`). */
  resume?: ResumeSettings;
}

/** One event waiting for its stream: its text and, on a resumable stream, its cursor (the SSE `id:`). */
interface QueuedEvent {
  readonly text: string;
  readonly id: string | undefined;
}

/** Starts an event stream on a GET's response (status and headers, sent at once). */
export function startEventStream(response: ServerResponse): void {
  response.writeHead(200, { 'Content-Type': EVENT_STREAM_CONTENT_TYPE, 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  response.flushHeaders();
}

/** The messages waiting for one event stream, and the response that streams them when attached. */
class Mailbox {
  queue: QueuedEvent[] = [];
  /** What a resumable stream sent or will send, for a client that resumes it. */
  readonly replay: ReplayBuffer | undefined;
  receiver: ServerResponse | undefined;
  keepAlive: NodeJS.Timeout | undefined;
  isFull = false;

  constructor(resume: ResumeSettings | undefined) {
    this.replay = resume && new ReplayBuffer({ maxMessages: resume.bufferMessages, maxAgeMs: resume.bufferMs });
  }
}

/** What {@link HttpServerStream.attach} did with an event stream. */
export type AttachOutcome = 'attached' | 'busy' | 'gone';

/**
 * The server side of one Streamable HTTP connection.
 *
 * @remarks
 * Routing follows the SDK: an answer goes to the stream its request was routed to (the session
 * of its `Acp-Session-Id`, else the connection's); any other message to its `params.sessionId`'s
 * session stream, else the connection's. Messages wait in memory until their stream is attached;
 * past `maxBufferedBytes` held, writes to this stream wait (so a `Connection` stops dispatching),
 * and if nothing is taken for `maxOutputStallMs` the stream is destroyed with an
 * {@link OutputStalledError}.
 *
 * @internal
 */
export class HttpServerStream extends Duplex {
  readonly connectionId: string;
  readonly #maxBufferedBytes: number;
  readonly #maxStallMs: number;
  readonly #connectionBox: Mailbox;
  readonly #resume: ResumeSettings | undefined;
  /** The highest `Acp-Client-Seq` taken (resumable connections drop a POST at or below it as a resubmission). */
  #appliedSeq = 0;
  readonly #sessions = new Map<string, Mailbox>();
  /** Client request id key → the session its answer goes to (`null`: the connection's stream). */
  readonly #routes = new Map<string, string | null>();
  /** Client request id key → the POST that waits for its answer. */
  readonly #replies = new Map<string, BodyReply>();
  readonly #hasSessionStreams: boolean;
  #partial = '';
  #bufferedBytes = 0;
  #heldWrite: (() => void) | undefined;
  #stallTimer: NodeJS.Timeout | undefined;
  #inputWaiters: (() => void)[] = [];
  #isInputFull = false;
  readonly #idle: IdleWatch;
  /** The heartbeat interval the client named (`Acp-Heartbeat`), once it named one; 0 before. */
  #heartbeatMs = 0;
  /** When the client was last heard from (any request of this connection). */
  #lastHeard = 0;
  #liveness: NodeJS.Timeout | undefined;

  /** Emits `'idle'` once nothing has held it for `options.httpIdleTimeoutMs` (see {@link HttpServerStream.hold}). */
  constructor(connectionId: string, options: HttpServerStreamOptions) {
    super({ decodeStrings: false, allowHalfOpen: true });
    this.connectionId = connectionId;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? 64 * 1024 * 1024;
    this.#maxStallMs = options.maxOutputStallMs ?? 60_000;
    this.#hasSessionStreams = options.hasSessionStreams ?? true;
    this.#resume = options.resume;
    this.#connectionBox = new Mailbox(options.resume);
    const idleMs = options.resume ? Math.max(1, options.resume.graceMs) : (options.httpIdleTimeoutMs ?? DEFAULT_HTTP_IDLE_TIMEOUT_MS);
    this.#idle = new IdleWatch(idleMs, () => {
      clearInterval(this.#liveness);
      this.emit('idle');
    });
  }

  /**
   * Notes a request of this connection's client (a POST, a GET, a heartbeat). On a resumable
   * connection, `heartbeatMs` (the interval an `Acp-Heartbeat` header named) starts the liveness
   * check: once the client has been silent for {@link HEARTBEAT_MISSES} intervals, its event
   * streams are dropped, as a dead network would drop them if TCP said so, and the grace period
   * runs (a client that comes back resumes them).
   */
  heard(heartbeatMs: number | undefined): void {
    if (this.#resume === undefined) return;
    this.#lastHeard = Date.now();
    if (heartbeatMs === undefined || heartbeatMs === this.#heartbeatMs || this.destroyed || this.writableFinished) return;
    this.#heartbeatMs = heartbeatMs;
    clearInterval(this.#liveness);
    this.#liveness = setInterval(() => this.#checkLiveness(), heartbeatMs).unref();
  }

  /** Drops the event streams of a client silent for {@link HEARTBEAT_MISSES} heartbeat intervals. */
  #checkLiveness(): void {
    if (Date.now() - this.#lastHeard <= HEARTBEAT_MISSES * this.#heartbeatMs) return;
    for (const box of [this.#connectionBox, ...this.#sessions.values()]) if (box.receiver) this.#detach(box);
  }

  /** Keeps the connection from being idle (a POST in progress) until the returned function is called. */
  hold(): () => void {
    return this.#idle.hold();
  }

  /** Takes one POSTed message (its JSON text); resolves once the stream can take more. */
  accept(body: Buffer): Promise<void> {
    if (!pushFrame(this, body)) this.#isInputFull = true;
    if (!this.#isInputFull || this.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.#inputWaiters.push(resolve));
  }

  /** Remembers where the answer to a client request goes. */
  routeAnswer(id: unknown, sessionId: string | null): void {
    const key = idKey(id);
    if (key !== undefined) this.#routes.set(key, sessionId);
  }

  /**
   * Sends the answer to the client request `id` to `reply` rather than to an event stream.
   *
   * @returns false when an answer to that id is already awaited (or the id is not a valid one)
   */
  replyInBody(id: unknown, reply: BodyReply): boolean {
    const key = idKey(id);
    if (key === undefined || this.#replies.has(key)) return false;
    if (this.writableFinished || this.destroyed) {
      reply.fail();
      return true;
    }
    this.#replies.set(key, reply);
    return true;
  }

  /** Resolves with the answer line to the `initialize` request `id`, or `undefined` if the stream ends first. */
  expectInitialize(id: unknown): Promise<string | undefined> {
    // A connection is not idle while its `initialize` waits for the agent's answer.
    const release = this.#idle.hold();
    return new Promise<string | undefined>((resolve) => {
      if (!this.replyInBody(id, { deliver: (line) => (resolve(line), true), fail: () => resolve(undefined) })) resolve(undefined);
    }).finally(release);
  }

  /**
   * Whether a POST stamped `Acp-Client-Seq: seq` is new (and takes it): on a resumable connection
   * a seq at or below the highest taken is a resubmission already applied.
   */
  takeSeq(seq: number | undefined): boolean {
    if (this.#resume === undefined || seq === undefined) return true;
    if (seq <= this.#appliedSeq) return false;
    this.#appliedSeq = seq;
    return true;
  }

  /**
   * Lets go of the held events of a stream (the session's, else the connection's) up to
   * `received`, the last event id its client says it has (`Acp-Events-Received`); nothing without
   * one, or for a session this connection does not have.
   */
  release(sessionId: string | undefined, received: string | undefined): void {
    if (received === undefined) return;
    const box = sessionId === undefined ? this.#connectionBox : this.#sessions.get(sessionId);
    box?.replay?.release(received);
  }

  /**
   * Attaches an event stream (a GET's response) to the connection's stream or a session's; with
   * `lastEventId` (a resumable connection), from the event after that cursor.
   *
   * @returns `'busy'` when that stream already has a receiver and this is no resume (the caller
   * answers 409; a resume takes over from it), `'gone'` when the events after `lastEventId` are no
   * longer all held (409 too)
   */
  attach(response: ServerResponse, sessionId: string | undefined, lastEventId?: string): AttachOutcome {
    const box = sessionId === undefined ? this.#connectionBox : this.#box(sessionId);
    const isResume = lastEventId !== undefined && box.replay !== undefined;
    if (box.receiver && !isResume) return 'busy';
    if (isResume && !this.#rewind(box, lastEventId)) return 'gone';
    // A resume takes over from a receiver the server still holds (a half-open connection).
    if (box.receiver) this.#detach(box);
    box.receiver = response;
    const release = this.#idle.hold();
    // A GET that waited for its connection to open has had its status and headers already.
    if (!response.headersSent) startEventStream(response);
    box.keepAlive = setInterval(() => box.receiver?.write(SSE_KEEP_ALIVE), KEEP_ALIVE_MS).unref();
    response.once('close', () => {
      release();
      if (box.receiver !== response) return;
      clearInterval(box.keepAlive);
      box.receiver = undefined;
      box.isFull = false;
    });
    if (this.writableFinished || this.destroyed) response.end();
    else this.#flush(box);
    return 'attached';
  }

  /** Lets go of a box's receiver (destroyed: what it did not take is queued again by the resume). */
  #detach(box: Mailbox): void {
    const receiver = box.receiver!;
    clearInterval(box.keepAlive);
    box.receiver = undefined;
    box.isFull = false;
    receiver.destroy();
  }

  /** Queues again every held event after `cursor`; false when some are no longer held. */
  #rewind(box: Mailbox, cursor: string): boolean {
    const entries = box.replay!.since(cursor);
    if (entries === undefined) return false;
    for (const event of box.queue) this.#bufferedBytes -= event.text.length;
    box.queue = entries.map((entry) => ({ text: entry.text, id: entry.cursor }));
    for (const event of box.queue) this.#bufferedBytes += event.text.length;
    return true;
  }

  /** Ends the connection from the client's side (DELETE, or the server shutting down). */
  closeGoingAway(): void {
    if (!this.readableEnded) this.push(null);
    this.#releaseInput();
  }

  override _read(): void {
    this.#releaseInput();
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const lines = (this.#partial + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'))).split('\n');
    this.#partial = lines.pop()!;
    for (const line of lines) if (line !== '') this.#route(line);
    if (this.#bufferedBytes <= this.#maxBufferedBytes) return callback();
    this.#heldWrite = () => callback();
    this.#armStallTimer();
  }

  override _final(callback: (error?: Error | null) => void): void {
    clearInterval(this.#liveness);
    this.#endReceivers(false);
    this.#failReplies();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#idle.stop();
    clearInterval(this.#liveness);
    this.#endReceivers(error !== null);
    this.#failReplies();
    this.#releaseInput();
    callback(error);
  }

  #route(line: string): void {
    const message = parseRouted(line);
    if (message === undefined) return this.#deliver(this.#connectionBox, line);
    if (isResponse(message)) return this.#routeAnswer(message, line);
    const sessionId = this.#hasSessionStreams ? sessionIdOf(message) : undefined;
    this.#deliver(sessionId === undefined ? this.#connectionBox : this.#box(sessionId), line);
  }

  #routeAnswer(message: RoutedMessage, line: string): void {
    const key = idKey(message.id);
    const reply = key === undefined ? undefined : this.#replies.get(key);
    if (reply) {
      this.#replies.delete(key!);
      if (reply.deliver(line)) return;
    }
    const session = key === undefined ? undefined : this.#routes.get(key);
    if (key !== undefined) this.#routes.delete(key);
    // A session just created: its stream exists from now on, so its first updates wait there.
    const created = this.#hasSessionStreams ? resultSessionIdOf(message) : undefined;
    if (created !== undefined) this.#box(created);
    this.#deliver(session ? this.#box(session) : this.#connectionBox, line);
  }

  #failReplies(): void {
    const replies = [...this.#replies.values()];
    this.#replies.clear();
    for (const reply of replies) reply.fail();
  }

  #box(sessionId: string): Mailbox {
    let box = this.#sessions.get(sessionId);
    if (!box) {
      box = new Mailbox(this.#resume);
      this.#sessions.set(sessionId, box);
    }
    return box;
  }

  #deliver(box: Mailbox, line: string): void {
    if (box.replay) {
      const id = decimalText(box.replay.nextCursor);
      const text = stampCursor(line, id);
      box.replay.append(text);
      box.queue.push({ text, id });
      this.#bufferedBytes += text.length;
    } else {
      box.queue.push({ text: line, id: undefined });
      this.#bufferedBytes += line.length;
    }
    this.#flush(box);
  }

  #flush(box: Mailbox): void {
    const receiver = box.receiver;
    if (!receiver || box.isFull || box.queue.length === 0) return;
    let taken = 0;
    while (box.queue.length > 0 && !box.isFull) {
      const event = box.queue.shift()!;
      taken += event.text.length;
      if (!receiver.write(sseEvent(event.text, event.id))) {
        box.isFull = true;
        receiver.once('drain', () => {
          box.isFull = false;
          if (box.receiver === receiver) this.#flush(box);
        });
      }
    }
    this.#bufferedBytes -= taken;
    this.#onProgress();
  }

  #onProgress(): void {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
    if (this.#heldWrite === undefined) return;
    if (this.#bufferedBytes > this.#maxBufferedBytes) return this.#armStallTimer();
    const release = this.#heldWrite;
    this.#heldWrite = undefined;
    release();
  }

  #armStallTimer(): void {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = setTimeout(() => this.destroy(new OutputStalledError(this.#maxStallMs)), this.#maxStallMs).unref();
  }

  #releaseInput(): void {
    this.#isInputFull = false;
    const waiters = this.#inputWaiters;
    this.#inputWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #endReceivers(isFailure: boolean): void {
    clearTimeout(this.#stallTimer);
    for (const box of [this.#connectionBox, ...this.#sessions.values()]) {
      clearInterval(box.keepAlive);
      const receiver = box.receiver;
      box.receiver = undefined;
      if (!receiver) continue;
      if (isFailure) {
        receiver.destroy();
        continue;
      }
      // The last answers go out before the stream ends.
      for (const event of box.queue.splice(0)) receiver.write(sseEvent(event.text, event.id));
      receiver.end();
    }
  }
}
