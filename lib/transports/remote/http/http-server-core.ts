/**
 * What both Streamable HTTP dialects of the remote server share: the connections by id, each
 * request answered by its method, a POST's body read as one message, an `initialize` admitted or
 * refused, a connection opened and handed over, a `DELETE`.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { JSON_CONTENT_TYPE } from './http-protocol';
import { HttpServerStream, type HttpServerLimits, type HttpServerStreamOptions } from './http-server-stream';
import { DEFAULT_MAX_PAYLOAD, RETRY_AFTER_SECONDS } from '../limits';
import type { ResumeOptions } from '../resume/resume-options';
import type { RoutedMessage } from '../routed-message';

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
 * The core of a Streamable HTTP dialect: its connections by id and the steps every dialect takes;
 * a dialect says what each method does.
 *
 * @internal
 */
export abstract class HttpServerCore {
  /** The options of the HTTP side (limits, `maxPayload`, `resume`). */
  protected readonly options: HttpStreamServerOptions;
  /** The open connections, by id. */
  protected readonly streams = new Map<string, HttpServerStream>();
  readonly #onStream: HttpStreamSink;
  readonly #admit: (request: IncomingMessage) => boolean;

  /** @param admit - whether a new connection may open now (else its `initialize` POST is refused 503) */
  constructor(options: HttpStreamServerOptions, onStream: HttpStreamSink, admit: (request: IncomingMessage) => boolean = () => true) {
    this.options = options;
    this.#onStream = onStream;
    this.#admit = admit;
  }

  /** Answers one request (to the connection `connectionId` when the dialect names it in the path); 405 for a method it does not serve. */
  handle(request: IncomingMessage, response: ServerResponse, connectionId?: string): void {
    switch (request.method) {
      case 'POST':
        return this.post(request, response, connectionId);
      case 'GET':
        return this.get(request, response, connectionId);
      case 'DELETE':
        return this.delete(request, response, connectionId);
      default:
        response.setHeader('Allow', 'GET, POST, DELETE');
        return text(response, 405, 'Method Not Allowed');
    }
  }

  /** Forgets every connection (their streams are closed by the listener). */
  close(): void {
    this.streams.clear();
  }

  /** Answers a `POST`: a client message (an `initialize` opens a connection). */
  protected abstract post(request: IncomingMessage, response: ServerResponse, connectionId: string | undefined): void;
  /** Answers a `GET`: an event stream of a connection. */
  protected abstract get(request: IncomingMessage, response: ServerResponse, connectionId: string | undefined): void;
  /** Answers a `DELETE`: the client ends its connection. */
  protected abstract delete(request: IncomingMessage, response: ServerResponse, connectionId: string | undefined): void;

  /** Refuses an `initialize` that cannot open a connection (400 without an id, 503 when full); returns whether it did. */
  protected refuseInitialize(request: IncomingMessage, response: ServerResponse, message: RoutedMessage): boolean {
    if (message.id === null) return (void text(response, 400, 'Initialize request must include an ID'), true);
    if (this.#admit(request)) return false;
    response.setHeader('Retry-After', RETRY_AFTER_SECONDS);
    text(response, 503, 'Too many clients');
    return true;
  }

  /**
   * Opens the connection `connectionId` with its `initialize` request (`body`): registered until
   * it ends, prepared by `prepare` (where its `initialize` answer goes), handed over, and given
   * that request. Resolves once the stream has taken it.
   */
  protected async open(
    request: IncomingMessage,
    connectionId: string,
    streamOptions: HttpServerStreamOptions,
    body: Buffer,
    prepare: (stream: HttpServerStream) => void,
  ): Promise<HttpServerStream> {
    const stream = new HttpServerStream(connectionId, streamOptions);
    this.streams.set(connectionId, stream);
    const forget = (): void => this.forget(connectionId, stream);
    stream.once('finish', forget);
    stream.once('close', forget);
    stream.once('idle', forget);
    prepare(stream);
    this.#onStream(stream, { transport: 'http', request, connectionId });
    await stream.accept(body);
    return stream;
  }

  /** Forgets `stream` as the connection `connectionId` (nothing when another holds that id now). */
  protected forget(connectionId: string, stream: HttpServerStream): void {
    if (this.streams.get(connectionId) === stream) this.streams.delete(connectionId);
  }

  /** Ends the connection `connectionId` from its client's side (202), or answers 404 with `unknown`. */
  protected deleteConnection(response: ServerResponse, connectionId: string, unknown: string): void {
    const stream = this.streams.get(connectionId);
    if (!stream) return text(response, 404, unknown);
    this.streams.delete(connectionId);
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
