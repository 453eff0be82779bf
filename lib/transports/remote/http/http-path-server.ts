/**
 * The second Streamable HTTP dialect of the remote server, the one `acp-http-client` (rivet's
 * sandbox-agent client) speaks: the client names its connection in the URL path (`PATH/<id>`),
 * every request's answer is the body of its POST's response, and one `GET` event stream on the
 * same URL carries everything else the agent sends. No `Acp-Connection-Id` or `Acp-Session-Id`.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EVENT_STREAM_CONTENT_TYPE, HEADER_SESSION_ID } from './http-protocol';
import { HEADER_CONNECTION_ID } from '../remote-connection';
import { idKey, isRequest, type RoutedMessage } from '../routed-message';
import { HttpServerCore, header, json, readPostedMessage, text } from './http-server-core';
import { startEventStream, type BodyReply } from './http-server-stream';

/** What a connection id in the path may hold: URL-unreserved characters and percent escapes. */
const CONNECTION_ID = /^[A-Za-z0-9._~%-]{1,128}$/;

/** How long a `GET` may wait for its connection's `initialize` before its (empty) stream ends. */
const WAITING_STREAM_MS = 10_000;
/** How many `GET`s may wait for their connection at once, all ids together. */
const MAX_WAITING_STREAMS = 64;

/**
 * The connection id of a request to `PATH/<id>` (one more path segment after the server's path),
 * or `undefined` for any other path.
 *
 * @internal
 */
export function connectionIdInPath(path: string, basePath: string): string | undefined {
  const prefix = basePath.endsWith('/') ? basePath : `${basePath}/`;
  if (!path.startsWith(prefix)) return undefined;
  const id = path.slice(prefix.length);
  return CONNECTION_ID.test(id) && id !== '.' && id !== '..' ? id : undefined;
}

/** A `GET` that came before its connection's `initialize`: its stream is attached once the connection opens. */
interface WaitingStream {
  readonly response: ServerResponse;
  readonly timer: NodeJS.Timeout;
}

/**
 * Answers the requests to `PATH/<id>` that passed the origin and token checks.
 *
 * @internal
 */
export class HttpPathServer extends HttpServerCore {
  readonly #waiting = new Map<string, WaitingStream>();

  /** Answers one request to the connection `connectionId`. */
  override handle(request: IncomingMessage, response: ServerResponse, connectionId: string): void {
    if (header(request, HEADER_CONNECTION_ID) !== undefined || header(request, HEADER_SESSION_ID) !== undefined) {
      return text(response, 400, `${HEADER_CONNECTION_ID} and ${HEADER_SESSION_ID} are not used when the connection id is in the path`);
    }
    super.handle(request, response, connectionId);
  }

  /** Forgets every connection (their streams are closed by the listener) and ends the waiting streams. */
  override close(): void {
    super.close();
    for (const id of [...this.#waiting.keys()]) this.#takeWaiting(id)?.end();
  }

  protected post(request: IncomingMessage, response: ServerResponse, connectionId: string): void {
    void this.#post(request, response, connectionId).catch(() => response.destroy());
  }

  async #post(request: IncomingMessage, response: ServerResponse, connectionId: string): Promise<void> {
    const posted = await readPostedMessage(request, response, this.options.maxPayload);
    if (posted === undefined) return;
    const { message, body } = posted;
    const stream = this.streams.get(connectionId);
    if (isRequest(message) && message.method === 'initialize') {
      if (stream) return text(response, 409, 'Connection id already in use');
      if (this.refuseInitialize(request, response, message)) return;
      return this.#open(request, response, connectionId, message, body);
    }
    if (!stream) return text(response, 404, 'Unknown connection id');
    // Its answer is found by its id: one that no answer can carry is refused here.
    if (isRequest(message) && idKey(message.id) === undefined) return text(response, 400, 'Invalid request id');
    if (isRequest(message) && !stream.replyInBody(message.id, bodyReply(response, message.id))) {
      return text(response, 409, 'A request with this id is already waiting for its answer');
    }
    // A POST in progress (for a request: until its answer) keeps its connection from being idle.
    response.once('close', stream.hold());
    await stream.accept(body);
    // A notification or an answer to the agent: nothing comes back in this POST.
    if (!isRequest(message)) response.writeHead(202).end();
  }

  async #open(
    request: IncomingMessage,
    response: ServerResponse,
    connectionId: string,
    message: RoutedMessage,
    body: Buffer,
  ): Promise<void> {
    // This dialect is not resumable (its answers come in POST bodies, not on a stream with cursors).
    const options = { ...this.options, hasSessionStreams: false, resume: undefined };
    await this.open(request, connectionId, options, body, (stream) => {
      const waiting = this.#takeWaiting(connectionId);
      if (waiting) stream.attach(waiting, undefined);
      stream.replyInBody(message.id, bodyReply(response, message.id));
      // A client that gives up on its initialize leaves nothing behind.
      response.once('close', () => {
        if (!response.writableFinished) stream.closeGoingAway();
      });
    });
  }

  protected get(request: IncomingMessage, response: ServerResponse, connectionId: string): void {
    if (!(request.headers.accept ?? '').toLowerCase().includes(EVENT_STREAM_CONTENT_TYPE)) return text(response, 406, 'Not Acceptable');
    const stream = this.streams.get(connectionId);
    if (stream) {
      if (stream.attach(response, undefined) === 'busy') text(response, 409, 'Outbound stream already has an active receiver');
      return;
    }
    // The client opens its stream together with its initialize POST, often first: the stream waits for it.
    if (this.#waiting.has(connectionId)) return text(response, 409, 'Outbound stream already has an active receiver');
    if (this.#waiting.size >= MAX_WAITING_STREAMS) return text(response, 503, 'Too many streams waiting for their connection');
    startEventStream(response);
    const timer = setTimeout(() => this.#takeWaiting(connectionId)?.end(), WAITING_STREAM_MS).unref();
    this.#waiting.set(connectionId, { response, timer });
    response.once('close', () => {
      if (this.#waiting.get(connectionId)?.response === response) this.#takeWaiting(connectionId);
    });
  }

  protected delete(_request: IncomingMessage, response: ServerResponse, connectionId: string): void {
    this.#takeWaiting(connectionId)?.end();
    this.deleteConnection(response, connectionId, 'Unknown connection id');
  }

  /** Removes the stream waiting for `connectionId`, if any, and returns its response. */
  #takeWaiting(connectionId: string): ServerResponse | undefined {
    const waiting = this.#waiting.get(connectionId);
    if (!waiting) return undefined;
    this.#waiting.delete(connectionId);
    clearTimeout(waiting.timer);
    return waiting.response;
  }
}

/** The answer to request `id` as the body of its POST's response (200), or 500 if the connection ends first. */
function bodyReply(response: ServerResponse, id: unknown): BodyReply {
  let isGone = false;
  response.once('close', () => {
    isGone = true;
  });
  return {
    deliver(line) {
      if (isGone || response.headersSent) return false;
      json(response, 200, line);
      return true;
    },
    fail() {
      if (isGone || response.headersSent) return;
      const failed = {
        jsonrpc: '2.0',
        id,
        error: { code: -32603, message: 'Internal error', data: 'the connection closed before answering' },
      };
      json(response, 500, JSON.stringify(failed));
    },
  };
}
