/**
 * The Streamable HTTP side of the remote server, as the official ACP SDK implements the draft:
 * `POST` carries each client message (the `initialize` POST opens a connection and gets its
 * answer and `Acp-Connection-Id`), `GET` opens an event stream for the agent's messages (the
 * connection's, or with `Acp-Session-Id` a session's), `DELETE` ends the connection.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  EVENT_STREAM_CONTENT_TYPE,
  HEADER_CLIENT_SEQ,
  HEADER_EVENTS_RECEIVED,
  HEADER_HEARTBEAT,
  HEADER_CONNECTION_ID,
  HEADER_LAST_EVENT_ID,
  HEADER_SESSION_ID,
  JSON_CONTENT_TYPE,
  isRequest,
  isSessionScoped,
  sessionIdOf,
  type RoutedMessage,
} from './http-protocol';
import { HttpServerStream, type HttpServerLimits } from './http-server-stream';
import { DEFAULT_MAX_PAYLOAD, RETRY_AFTER_SECONDS } from './limits';
import { advertiseResumable, resumeSettings, type ResumeOptions, type ResumeSettings } from './resume-options';

export { HEADER_CONNECTION_ID } from './http-protocol';
export type { HttpServerLimits } from './http-server-stream';

/** What the HTTP side hands over for each new connection. @internal */
export type HttpStreamSink = (stream: Duplex, info: { transport: 'http'; request: IncomingMessage; connectionId: string }) => void;

/** Options of the HTTP side. @internal */
export interface HttpStreamServerOptions extends HttpServerLimits {
  maxPayload?: number;
  resume?: ResumeOptions | boolean;
}

/** The body of a batch refusal, as the SDK sends it. */
const BATCH_REFUSAL = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'Invalid Request', data: 'JSON-RPC batches are not supported' },
});

/**
 * Answers Streamable HTTP requests that passed the path, origin and token checks.
 *
 * @internal
 */
export class HttpStreamServer {
  readonly #options: HttpStreamServerOptions;
  readonly #onStream: HttpStreamSink;
  readonly #admit: (request: IncomingMessage) => boolean;
  readonly #streams = new Map<string, HttpServerStream>();
  readonly #resume: ResumeSettings | undefined;

  /** @param admit - whether a new connection may open now (else its `initialize` POST is refused 503) */
  constructor(options: HttpStreamServerOptions, onStream: HttpStreamSink, admit: (request: IncomingMessage) => boolean = () => true) {
    this.#options = options;
    this.#onStream = onStream;
    this.#admit = admit;
    this.#resume = resumeSettings(options.resume);
  }

  /** Answers one request. */
  handle(request: IncomingMessage, response: ServerResponse): void {
    switch (request.method) {
      case 'POST': {
        const stream = this.#streams.get(header(request, HEADER_CONNECTION_ID) ?? '');
        const heartbeat = header(request, HEADER_HEARTBEAT);
        if (heartbeat !== undefined) return heartbeatPost(request, response, stream, heartbeat);
        stream?.heard(undefined);
        // A POST in progress keeps its connection from being idle.
        const release = stream?.hold();
        return void this.#post(request, response)
          .catch(() => response.destroy())
          .finally(release);
      }
      case 'GET':
        return this.#get(request, response);
      case 'DELETE':
        return this.#delete(request, response);
      default:
        response.setHeader('Allow', 'GET, POST, DELETE');
        return text(response, 405, 'Method Not Allowed');
    }
  }

  /** Forgets every connection (their streams are closed by the listener). */
  close(): void {
    this.#streams.clear();
  }

  async #post(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const posted = await readPostedMessage(request, response, this.#options.maxPayload);
    if (posted === undefined) return;
    const { message, body } = posted;
    const connectionId = header(request, HEADER_CONNECTION_ID);
    if (isRequest(message) && message.method === 'initialize') {
      if (connectionId !== undefined) return text(response, 400, 'Initialize not allowed on existing connection');
      if (message.id === null) return text(response, 400, 'Initialize request must include an ID');
      if (!this.#admit(request)) {
        response.setHeader('Retry-After', RETRY_AFTER_SECONDS);
        return text(response, 503, 'Too many clients');
      }
      return this.#open(request, response, message, body);
    }
    if (connectionId === undefined) return text(response, 400, 'Missing Acp-Connection-Id');
    const stream = this.#streams.get(connectionId);
    if (!stream) return text(response, 404, 'Unknown Acp-Connection-Id');
    if (typeof message.method === 'string') {
      const headerSession = header(request, HEADER_SESSION_ID);
      const paramsSession = sessionIdOf(message);
      if ((isSessionScoped(message.method) || paramsSession !== undefined) && headerSession === undefined) {
        return text(response, 400, 'Missing Acp-Session-Id');
      }
      if (headerSession !== undefined && paramsSession !== undefined && headerSession !== paramsSession) {
        return text(response, 400, 'Mismatched Acp-Session-Id');
      }
      // `session/load` replays the session's history: its answer comes on the connection's stream.
      if (!stream.takeSeq(seqOf(request))) return void response.writeHead(202).end();
      stream.release(headerSession, header(request, HEADER_EVENTS_RECEIVED));
      if (isRequest(message)) stream.routeAnswer(message.id, message.method === 'session/load' ? null : (headerSession ?? null));
    } else if (!stream.takeSeq(seqOf(request))) return void response.writeHead(202).end();
    else stream.release(header(request, HEADER_SESSION_ID), header(request, HEADER_EVENTS_RECEIVED));
    await stream.accept(body);
    response.writeHead(202).end();
  }

  async #open(request: IncomingMessage, response: ServerResponse, message: RoutedMessage, body: Buffer): Promise<void> {
    const connectionId = randomUUID();
    const stream = new HttpServerStream(connectionId, { ...this.#options, resume: this.#resume });
    this.#streams.set(connectionId, stream);
    const forget = (): void => {
      if (this.#streams.get(connectionId) === stream) this.#streams.delete(connectionId);
    };
    stream.once('finish', forget);
    stream.once('close', forget);
    stream.once('idle', forget);
    const answer = stream.expectInitialize(message.id);
    // A client that gives up on its initialize leaves nothing behind.
    const onGiveUp = (): void => stream.closeGoingAway();
    response.once('close', onGiveUp);
    this.#onStream(stream, { transport: 'http', request, connectionId });
    await stream.accept(body);
    let line = await answer;
    response.removeListener('close', onGiveUp);
    if (line !== undefined && this.#resume) line = advertiseResumable(line, this.#resume);
    if (line === undefined) {
      forget();
      const failed = {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32603, message: 'Initialize failed', data: 'the connection closed before answering' },
      };
      return json(response, 500, JSON.stringify(failed));
    }
    response.setHeader(HEADER_CONNECTION_ID, connectionId);
    json(response, 200, line);
  }

  #get(request: IncomingMessage, response: ServerResponse): void {
    if (!(request.headers.accept ?? '').toLowerCase().includes(EVENT_STREAM_CONTENT_TYPE)) return text(response, 406, 'Not Acceptable');
    const connectionId = header(request, HEADER_CONNECTION_ID);
    if (connectionId === undefined) return text(response, 400, 'Missing Acp-Connection-Id');
    const stream = this.#streams.get(connectionId);
    // A resume of a connection the server no longer has is refused as a conflict, never a fresh stream.
    const lastEventId = this.#resume ? header(request, HEADER_LAST_EVENT_ID) : undefined;
    if (!stream && lastEventId !== undefined) return text(response, 409, 'Unknown Acp-Connection-Id: resume at the protocol level');
    if (!stream) return text(response, 404, 'Unknown Acp-Connection-Id');
    stream.heard(heartbeatMsOf(header(request, HEADER_HEARTBEAT)));
    const outcome = stream.attach(response, header(request, HEADER_SESSION_ID), lastEventId);
    if (outcome === 'busy') text(response, 409, 'Outbound stream already has an active receiver');
    else if (outcome === 'gone') text(response, 409, `Last-Event-ID ${lastEventId} is no longer held: resume at the protocol level`);
  }

  #delete(request: IncomingMessage, response: ServerResponse): void {
    const connectionId = header(request, HEADER_CONNECTION_ID);
    if (connectionId === undefined) return text(response, 400, 'Missing Acp-Connection-Id');
    const stream = this.#streams.get(connectionId);
    if (!stream) return text(response, 404, 'Unknown Acp-Connection-Id');
    this.#streams.delete(connectionId);
    stream.closeGoingAway();
    response.writeHead(202).end();
  }
}

/**
 * Reads a POST's body as one JSON-RPC message object; answers what is not one (415, 413, 400, as
 * the SDK's server) and then resolves `undefined`.
 *
 * @internal
 */
export async function readPostedMessage(
  request: IncomingMessage,
  response: ServerResponse,
  maxPayload = DEFAULT_MAX_PAYLOAD,
): Promise<{ message: RoutedMessage; body: Buffer } | undefined> {
  if (mediaType(request.headers['content-type']) !== JSON_CONTENT_TYPE) return void text(response, 415, 'Unsupported Media Type');
  const body = await readLimited(request, maxPayload);
  if (body === undefined) return void text(response, 413, 'Payload Too Large');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return void text(response, 400, 'Invalid JSON');
  }
  if (Array.isArray(value)) return void json(response, 400, BATCH_REFUSAL);
  if (typeof value !== 'object' || value === null) return void text(response, 400, 'Invalid JSON-RPC message');
  return { message: value as RoutedMessage, body };
}

/**
 * Answers a client's heartbeat (an empty `POST` with `Acp-Heartbeat`): 204 once noted by its
 * connection (which also takes its `Acp-Events-Received`), 404 for a connection the server does
 * not have. Its body, if any, is read and ignored.
 */
function heartbeatPost(request: IncomingMessage, response: ServerResponse, stream: HttpServerStream | undefined, heartbeat: string): void {
  request.resume();
  if (!stream) return text(response, 404, 'Unknown Acp-Connection-Id');
  stream.heard(heartbeatMsOf(heartbeat));
  stream.release(header(request, HEADER_SESSION_ID), header(request, HEADER_EVENTS_RECEIVED));
  response.writeHead(204).end();
}

/** The shortest and longest heartbeat interval a client may name, in milliseconds. */
const MIN_HEARTBEAT_MS = 50;
const MAX_HEARTBEAT_MS = 3_600_000;

/** The interval an `Acp-Heartbeat` header names, when it is a whole number of milliseconds within bounds. */
function heartbeatMsOf(value: string | undefined): number | undefined {
  if (value === undefined || !/^[1-9][0-9]{0,6}$/.test(value)) return undefined;
  const ms = Number(value);
  return ms >= MIN_HEARTBEAT_MS && ms <= MAX_HEARTBEAT_MS ? ms : undefined;
}

/** The `Acp-Client-Seq` of a POST, when it is a positive integer (of at most 15 digits, no leading zero). */
function seqOf(request: IncomingMessage): number | undefined {
  const value = header(request, HEADER_CLIENT_SEQ);
  if (value === undefined || value.length === 0 || value.length > 15 || value.charCodeAt(0) === 0x30) return undefined;
  let seq = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    seq = seq * 10 + digit;
  }
  return seq;
}

/** Header names as Node keys them (lower case), by the names this module asks for. */
const headerKeys = new Map<string, string>();

/** A request header's (first) value. @internal */
export function header(request: IncomingMessage, name: string): string | undefined {
  let key = headerKeys.get(name);
  if (key === undefined) headerKeys.set(name, (key = name.toLowerCase()));
  const value = request.headers[key];
  return Array.isArray(value) ? value[0] : value;
}

function mediaType(contentType: string | undefined): string {
  // What nearly every client sends, taken as it is.
  if (contentType === JSON_CONTENT_TYPE) return contentType;
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** Ends a response with a status and a short text body. @internal */
export function text(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(body);
}

/** Ends a response with a status and a JSON body. @internal */
export function json(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'Content-Type': JSON_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body) }).end(body);
}

/** The request body, or `undefined` when it is longer than `limit` (the rest is drained). */
function readLimited(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let isTooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) isTooLarge = true;
      if (!isTooLarge) chunks.push(chunk);
    });
    request.once('end', () => resolve(isTooLarge ? undefined : Buffer.concat(chunks, size)));
    request.once('error', reject);
  });
}
