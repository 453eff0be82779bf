/**
 * A JSON-RPC 2.0 connection over a readable and a writable stream: ids, the pending map, dispatch
 * to handlers, cancellation and close. Never sees sockets or processes.
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';
import { EventEmitter } from 'node:events';
import type { Disposable } from '../support/disposable';
import {
  ConnectionClosedError,
  type FrameTooLargeError,
  JsonParseError,
  NotificationHandlerError,
  ProtocolError,
  RpcError,
  describeThrown,
  type AcpWireError,
  type CloseReason,
} from '../jsonrpc/errors';
import { briefly, defaultLogger, logLazily, type Logger } from '../support/logger';
import {
  classify,
  validKindOf,
  type ErrorObject,
  type JsonValue,
  type NotificationMessage,
  type RequestId,
  type RequestMessage,
  type ResponseMessage,
} from '../jsonrpc/message';
import { CANCEL_REQUEST_METHOD, cancelTargetOf } from '../jsonrpc/protocol';
import { rawIdText, requestIdOfHead } from '../framing/raw-id';
import type { MetaStamp } from '../framing/meta-stamp';
import { cancelLine, notificationLine, notificationLineWithMeta, requestLine, responseLine, responseLineWithMeta } from '../framing/lines';
import { InflightRequests } from '../requests/inflight';
import { PendingRequests } from '../requests/pending';
import { callRequestHandler, isThenable } from '../requests/handler-call';
import { InboundRequest, type InboundWire } from '../requests/inbound-request';
import { OutboundRequest, type OutboundWire } from '../requests/outbound-request';
import { sendingJobsReturned } from '../requests/drop-scheduler';
import { Router, checkMethod, type NotificationHandler, type RequestHandler } from '../requests/router';
import {
  NO_SEND_OPTIONS,
  PreparedRequest,
  checkSendOptions,
  publishRequest,
  type SendRequestOptions,
  type SentRequest,
} from '../requests/sent-request';
import { InputReader } from '../framing/input-reader';
import { arrayElementTexts } from '../framing/json-text';
import { BatchAnswers, dispatchBatch, type BatchOwner } from './batch';
import { whenDrained, type DrainOptions } from './drain';
import { LineWriter } from '../framing/writer';
import { registerConnectionHooks, type RequestGate } from './connection-hooks';

// The ACP layer and the transports reach a connection's internals through these (see connection-hooks.ts).
export { acceptBatches, closeConnection, setRequestGate, type GateVerdict, type RequestGate } from './connection-hooks';

/** Options of a {@link Connection}. */
export interface ConnectionOptions {
  /** Where logs and the wire trace go. Default: silent unless `ACP_WIRE_LOG` is set. */
  logger?: Logger;
  /** Longest accepted incoming line in bytes. Default 64 MiB. */
  maxLineBytes?: number;
  /** End the output stream when the connection closes. Default `true`. */
  endOutputOnClose?: boolean;
  /** A name for logs (e.g. `agent`). */
  name?: string;
  /**
   * Answer JSON-RPC 2.0 batches as the JSON-RPC 2.0 specification says (each entry handled, the
   * answers in one array, nothing for a batch of notifications). Default `false`: a batch is
   * answered with one `-32600` (ACP v1 has no batches). The ACP helpers turn it on for a
   * connection that negotiated ACP v2.
   */
  batches?: boolean;
}

/**
 * Events of a {@link Connection}.
 *
 * @remarks A connection never emits `'error'`: in Node that name means "fatal", and nothing a peer
 * sends is fatal to a connection. A fatal end is `'close'` with its reason.
 */
export interface ConnectionEvents {
  /**
   * A problem that does not close the connection: a line that is not JSON or too long, an invalid
   * message, an unmatched response, a failed notification handler. Also logged at `warn`.
   * Listening is optional.
   */
  warning: (warning: AcpWireError) => void;
  /** The connection closed; `error` is the stream error, when there was one. Emitted once. */
  close: (reason: CloseReason, error?: Error) => void;
  /** The output can take more again after {@link Connection.writableNeedDrain} was `true`. */
  drain: () => void;
}

/**
 * One JSON-RPC 2.0 peer over NDJSON on a pair of streams.
 *
 * @remarks
 * Messages are dispatched synchronously in arrival order as each chunk is decoded; request handlers
 * then run concurrently. Outgoing lines are written together in a microtask queued by the first
 * one: a burst of answers costs one `write()`, or two when some come from async handlers (a burst
 * longer than the output's high-water mark is written as it grows).
 * Backpressure: while the output cannot take more, the connection keeps reading but holds what it
 * reads, in order, and dispatches it once the output drains; it stops reading only when it holds
 * more than 16 MiB. (Reading on means two peers that flood each other never wait on each other.)
 * What you send is queued whatever the peer reads: wait on {@link Connection.drained} (or
 * `writableNeedDrain` and `'drain'`) when you send a lot.
 * The connection closes when `close()` is called, the input ends or errors, or the output errors:
 * pending outgoing requests then reject with {@link ConnectionClosedError}, handlers' signals abort,
 * no automatic answers are sent, and every listener this connection added is removed.
 *
 * @example
 * ```ts
 * const connection = new Connection(socket, socket);
 * connection.onRequest('ping', () => 'pong');
 * console.log(await connection.sendRequest('ping'));
 * ```
 */
export class Connection extends EventEmitter<{ [E in keyof ConnectionEvents]: Parameters<ConnectionEvents[E]> }> {
  readonly #router = new Router();
  readonly #pending = new PendingRequests();
  readonly #inflight = new InflightRequests();
  readonly #output: Writable;
  readonly #writer: LineWriter;
  /** The writer's `_meta` entries, when its output wants one on every message (a resumable stream). */
  readonly #meta: MetaStamp | undefined;
  readonly #reader: InputReader;
  readonly #logger: Logger;
  readonly #endOutput: boolean;
  readonly #inbound: InboundWire;
  readonly #outbound: OutboundWire;
  #nextId = 1;
  #gate: RequestGate | undefined;
  #acceptsBatches: boolean;
  #batchOwner: BatchOwner | undefined;
  #closeReason: CloseReason | undefined;
  #closed: Promise<void> | undefined;

  /**
   * @param input - the stream messages are read from (bytes)
   * @param output - the stream messages are written to
   * @throws TypeError if a stream is missing; RangeError for an invalid option
   */
  constructor(input: Readable, output: Writable, options: ConnectionOptions = {}) {
    super();
    // Any number of listeners (each `drained()` call adds its own) without Node's leak warning.
    this.setMaxListeners(0);
    if (!input || typeof input.on !== 'function') throw new TypeError('input must be a readable stream');
    if (!output || typeof output.write !== 'function') throw new TypeError('output must be a writable stream');
    this.#output = output;
    this.#logger = options.logger ?? defaultLogger(options.name);
    this.#endOutput = options.endOutputOnClose ?? true;
    this.#acceptsBatches = options.batches ?? false;
    this.#writer = new LineWriter(output, {
      backpressure: (isFull) => this.#onBackpressure(isFull),
      // The flush of a request's line runs after the job that sent it: the drop scheduler's cue.
      flushing: sendingJobsReturned,
    });
    this.#meta = this.#writer.metaStamp;
    this.#inbound = {
      isClosing: () => this.#closeReason !== undefined,
      finish: (req, result, error) => this.#finish(req, result, error),
    };
    this.#outbound = {
      publish: (req) => this.#publish(req),
      sendCancel: (id) => this.#sendCancel(id),
      giveUp: (id) => this.#pending.giveUp(id),
    };
    this.#reader = new InputReader(
      input,
      {
        dispatch: (value, line) => this.#receive(value, line),
        undecodable: (error) => this.#refuseLine(error),
        ended: () => void this.#shutdown('input ended'),
        failed: (error) => void this.#shutdown('input error', error),
        isClosed: () => this.#closeReason !== undefined,
        held: (isHeld, bytes) =>
          this.#logger.log('debug', isHeld ? `input paused: holding ${bytes} bytes until the output drains` : 'input resumed'),
      },
      options.maxLineBytes,
    );
    output.on('error', this.#onOutputError);
    registerConnectionHooks(this, {
      setGate: (gate) => {
        this.#gate = gate;
      },
      acceptBatches: (accept) => {
        this.#acceptsBatches = accept;
      },
      shutdown: (reason, error) => this.#shutdown(reason, error),
      holdInputWhileFull: (relay) => this.#reader.holdWhileFull(relay),
      heldBytes: () => this.#reader.heldBytes,
    });
  }

  /** Whether the connection is closing or closed. */
  get isClosed(): boolean {
    return this.#closeReason !== undefined;
  }

  /** Why the connection closed, or `undefined` while open. */
  get closeReason(): CloseReason | undefined {
    return this.#closeReason;
  }

  /**
   * Number of outgoing requests awaiting an answer: detached ones included, not those given up
   * after their `timeout` (their late answer is discarded).
   */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Number of received requests not answered yet (two with the same id count twice). */
  get inflightCount(): number {
    return this.#inflight.size;
  }

  /**
   * Whether the output cannot take more now (the peer is not reading fast enough): a sender should
   * wait for `'drain'` (or `await` {@link Connection.drained}) before sending more.
   *
   * @remarks Like a stream's `writableNeedDrain`. Sending anyway is not lost, only queued: memory
   * then grows with what you send.
   */
  get writableNeedDrain(): boolean {
    return this.#closeReason === undefined && this.#writer.needsDrain;
  }

  /** Bytes (characters of queued lines) written but not yet taken by the output stream's destination. */
  get writableLength(): number {
    return this.#writer.queuedBytes;
  }

  /**
   * Resolves once the output can take more: at once unless {@link Connection.writableNeedDrain}.
   *
   * @example
   * ```ts
   * for (const chunk of chunks) {
   *   connection.sendNotification('log', chunk);
   *   await connection.drained();
   * }
   * ```
   * @throws (rejects) ConnectionClosedError if the connection is or becomes closed first; the
   * signal's reason if `signal` is or becomes aborted first
   * @throws TypeError if `signal` is not an AbortSignal
   */
  drained(options?: DrainOptions): Promise<void> {
    return whenDrained(this, options);
  }

  /** The connection's logger. */
  get logger(): Logger {
    return this.#logger;
  }

  /**
   * Sends a request.
   *
   * @remarks After close, the returned request rejects at once with {@link ConnectionClosedError}.
   * @throws SerializationError if `params` cannot be serialized (nothing is sent)
   * @throws TypeError or RangeError for an invalid option
   */
  sendRequest<R = unknown>(method: string, params?: unknown, options: SendRequestOptions = NO_SEND_OPTIONS): SentRequest<R> {
    checkSendOptions(options);
    return publishRequest<R>(new OutboundRequest(checkMethod(method), params, this.#outbound), options);
  }

  /** Builds a request without sending it: take a cancellation handle, then `send()`. */
  prepareRequest<R = unknown>(method: string, params?: unknown, options: SendRequestOptions = NO_SEND_OPTIONS): PreparedRequest<R> {
    checkSendOptions(options);
    return new PreparedRequest<R>(new OutboundRequest(checkMethod(method), params, this.#outbound), options);
  }

  /**
   * Sends a notification.
   *
   * @remarks Queued even while the output is full: a sender of many should `await`
   * {@link Connection.drained} between sends (it resolves at once while the output can take more).
   * @throws ConnectionClosedError if the connection is closed
   * @throws SerializationError if `params` cannot be serialized (nothing is sent)
   */
  sendNotification(method: string, params?: unknown): void {
    if (this.#closeReason) throw new ConnectionClosedError(this.#closeReason, checkMethod(method));
    const meta = this.#meta;
    this.#send(meta ? notificationLineWithMeta(method, params, meta) : notificationLine(method, params));
  }

  /** Handles requests named `method`. See {@link RequestHandler}. */
  onRequest<P = unknown, R = unknown>(method: string, handler: RequestHandler<P, R>): Disposable {
    return this.#router.onRequest(method, handler as RequestHandler);
  }

  /** Handles notifications named `method`. See {@link NotificationHandler}. */
  onNotification<P = unknown>(method: string, handler: NotificationHandler<P>): Disposable {
    return this.#router.onNotification(method, handler as NotificationHandler);
  }

  /** Handles every request that no method handler claims. Without one: `-32601`. */
  onAnyRequest(handler: RequestHandler): Disposable {
    return this.#router.onAnyRequest(handler);
  }

  /** Handles every notification that no method handler claims. Without one: ignored. */
  onAnyNotification(handler: NotificationHandler): Disposable {
    return this.#router.onAnyNotification(handler);
  }

  /**
   * Closes the connection: pending requests reject with {@link ConnectionClosedError}, queued lines
   * are flushed and the output is ended (unless `endOutputOnClose` is false). Idempotent.
   *
   * @returns resolves once the output has finished
   */
  close(): Promise<void> {
    return this.#shutdown('closed locally');
  }

  /**
   * Closes the connection, as {@link Connection.close}: `await using connection = new Connection(…)`.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Emits a non-fatal problem as `'warning'` and logs it. */
  #report(warning: AcpWireError): void {
    logLazily(this.#logger, 'warn', () => `${warning.name}: ${warning.message}`);
    this.emit('warning', warning);
  }

  /** A line that could not be decoded: `-32700`, or `-32600` for an oversize request whose id shows. */
  #refuseLine(error: JsonParseError | FrameTooLargeError): void {
    if (error instanceof JsonParseError) this.#sendError(null, RpcError.parseError().toJSON());
    else this.#answerTooLarge(error);
    this.#report(error);
  }

  /**
   * A line over the limit: when its first bytes show a request's id, that request is answered
   * `-32600` (its requester would otherwise wait forever); otherwise nothing is sent.
   */
  #answerTooLarge(error: FrameTooLargeError): void {
    const rawId = requestIdOfHead(error.head);
    if (rawId === undefined || this.#closeReason) return;
    const refusal = RpcError.invalidRequest(`the line exceeds the limit of ${error.limit} bytes`).toJSON();
    this.#send(responseLine(null, rawId, undefined, refusal));
  }

  readonly #onOutputError = (error: Error): void => void this.#shutdown('output error', error);

  #onBackpressure(isFull: boolean): void {
    if (this.#closeReason) return;
    this.#reader.setOutputFull(isFull);
    // Held messages dispatched on the drain may have filled the output again: then the next drain says so.
    if (!isFull && !this.#writer.needsDrain) this.emit('drain');
  }

  #receive(value: unknown, line: string): void {
    if (this.#logger.traces) this.#logger.log('trace', `<- ${line}`);
    if (this.#closeReason) return;
    switch (validKindOf(value)) {
      case 'request':
        return this.#dispatchRequest(value as RequestMessage, line);
      case 'notification':
        return this.#dispatchNotification(value as NotificationMessage);
      case 'response':
        return this.#route(value as ResponseMessage);
    }
    if (this.#acceptsBatches && Array.isArray(value) && value.length > 0) return this.#receiveBatch(value, line);
    const c = classify(value);
    switch (c.kind) {
      case 'invalid': {
        const reason = this.#acceptsBatches && Array.isArray(value) ? 'an empty batch' : c.reason;
        this.#sendError(c.id, RpcError.invalidRequest(reason).toJSON(), line);
        return this.#report(new ProtocolError(`invalid message answered -32600: ${reason}`));
      }
      case 'badResponse':
        return this.#report(new ProtocolError(`dropped a malformed response: ${c.reason}`));
    }
  }

  /**
   * A JSON-RPC 2.0 batch (when accepted): its entries dispatched in order, their answers in one
   * array — or, on an output that stamps each message with a resumption cursor, each answer as a
   * message of its own, so that every answer carries its cursor.
   */
  #receiveBatch(values: unknown[], line: string): void {
    const owner = (this.#batchOwner ??= {
      isClosing: () => this.#closeReason !== undefined,
      settled: (request) => this.#inflight.delete(request),
      write: (text) => this.#send(text),
    });
    // JSON.parse accepted the line as an array, so its elements' texts are found.
    const texts = arrayElementTexts(line)!;
    const answers = this.#meta ? undefined : new BatchAnswers(owner);
    const dispatch = (value: unknown, text: string): void => this.#receiveEntry(value, text, answers);
    dispatchBatch(
      values,
      texts,
      dispatch,
      () => this.#reader.holdDispatch(),
      owner.isClosing,
      () => answers?.seal(),
    );
  }

  /** One entry of a batch: as a message on its own, answered through the batch's answers when there are any. */
  #receiveEntry(value: unknown, text: string, answers: BatchAnswers | undefined): void {
    switch (validKindOf(value)) {
      case 'request':
        answers?.expect();
        return this.#dispatchRequest(value as RequestMessage, text, answers?.wire);
      case 'notification':
        return this.#dispatchNotification(value as NotificationMessage);
      case 'response':
        return this.#route(value as ResponseMessage);
    }
    const c = classify(value);
    if (c.kind === 'badResponse') return this.#report(new ProtocolError(`dropped a malformed response in a batch: ${c.reason}`));
    if (c.kind !== 'invalid') return;
    const reason = Array.isArray(value) ? 'a batch entry must be a JSON object' : c.reason;
    const refusal = RpcError.invalidRequest(reason).toJSON();
    if (answers) answers.refuse(c.id, typeof c.id === 'number' ? rawIdText(text, c.id) : undefined, refusal);
    else this.#sendError(c.id, refusal, text);
    this.#report(new ProtocolError(`invalid batch entry answered -32600: ${reason}`));
  }

  #dispatchRequest(message: RequestMessage, line: string, wire: InboundWire = this.#inbound): void {
    const rawId = typeof message.id === 'number' ? rawIdText(line, message.id) : undefined;
    const verdict = this.#gate?.(message);
    const onAnswer = verdict !== undefined && 'onAnswer' in verdict ? verdict.onAnswer : undefined;
    const request = new InboundRequest(message.id, message.method, wire, rawId, onAnswer);
    if (verdict !== undefined && 'refuse' in verdict) return request.deliver(undefined, verdict.refuse);
    const handler = this.#router.requestHandler(message.method);
    if (!handler) return request.deliver(undefined, RpcError.methodNotFound(message.method).toJSON());
    this.#inflight.add(request);
    callRequestHandler(handler, message.params, request, this.#logger);
  }

  #dispatchNotification(message: NotificationMessage): void {
    const target = cancelTargetOf(message.method, message.params);
    if (target !== undefined) {
      if (target.ok) this.#inflight.markCancelledByPeer(target.id);
      else logLazily(this.#logger, 'warn', () => `ignored a malformed ${CANCEL_REQUEST_METHOD}: ${briefly(message.params)}`);
    }
    const handler = this.#router.notificationHandler(message.method);
    if (!handler) return;
    try {
      const returned = handler(message.params, message);
      if (isThenable(returned)) returned.then(undefined, (thrown) => this.#notificationFailed(message, thrown));
    } catch (thrown) {
      this.#notificationFailed(message, thrown);
    }
  }

  #notificationFailed(message: NotificationMessage, thrown: unknown): void {
    this.#report(new NotificationHandlerError(message.method, { cause: thrown }));
  }

  #route(message: ResponseMessage): void {
    const request = this.#pending.take(message.id);
    if (request === 'given up') {
      return logLazily(
        this.#logger,
        'debug',
        () => `discarded the late answer of a request given up after its timeout: ${briefly(message.id)}`,
      );
    }
    if (!request) {
      return this.#report(new ProtocolError(`dropped a response whose id matches no pending request: ${briefly(message.id)}`));
    }
    if ('error' in message) request.settle(undefined, message.error);
    else request.settle(message.result, undefined);
  }

  #publish(request: OutboundRequest): void {
    if (this.#closeReason) {
      return request.fail(new ConnectionClosedError(this.#closeReason, request.method), transportClosed);
    }
    const id = this.#nextId++;
    const line = requestLine(id, request.method, request.params);
    this.#pending.add(id, request);
    request.markPublished(id);
    this.#send(line);
  }

  #sendCancel(id: RequestId): void {
    if (this.#closeReason) return;
    this.#send(cancelLine(id));
  }

  #finish(request: InboundRequest, result: JsonValue | undefined, error: ErrorObject | undefined): void {
    if (this.#closeReason) return;
    const meta = this.#meta;
    const line = meta
      ? responseLineWithMeta(request.id, request.rawId, result, error, meta)
      : responseLine(request.id, request.rawId, result, error);
    this.#inflight.delete(request);
    this.#send(line);
  }

  #sendError(id: RequestId, error: ErrorObject, line?: string): void {
    const rawId = line !== undefined && typeof id === 'number' ? rawIdText(line, id) : undefined;
    this.#send(responseLine(id, rawId, undefined, error));
  }

  /** Writes one message's JSON text (the writer ends the line). */
  #send(text: string): void {
    if (this.#logger.traces) this.#logger.log('trace', `-> ${text}`);
    this.#writer.write(text);
  }

  #shutdown(reason: CloseReason, error?: Error): Promise<void> {
    if (this.#closed) return this.#closed;
    this.#closeReason = reason;
    this.#reader.detach();
    const closedError = new ConnectionClosedError(reason, undefined, error && { cause: error });
    this.#inflight.abandonAll(closedError);
    const pending = this.#pending.drain();
    for (const request of pending) {
      request.fail(new ConnectionClosedError(reason, request.method, error && { cause: error }), transportClosed);
    }
    if (error) this.#logger.log('warn', `connection closed (${reason}): ${describeThrown(error)}`);
    const endOutput = this.#endOutput && reason !== 'output error';
    this.#closed = this.#writer.end(endOutput).then(() => {
      this.#output.removeListener('error', this.#onOutputError);
      // A late write error (EPIPE after the peer died) must not crash the process.
      this.#output.on('error', ignore);
    });
    this.emit('close', reason, error);
    return this.#closed;
  }
}

function ignore(): void {}

/** The answer upstream gets when this connection closes before a forwarded request was answered. */
function transportClosed(method: string): ErrorObject {
  return RpcError.internalError({ reason: 'incoming_transport_closed', method }).toJSON();
}
