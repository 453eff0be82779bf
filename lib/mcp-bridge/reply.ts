/**
 * The HTTP answer to one MCP message POSTed to the bridge: one JSON body, or an SSE stream when
 * notifications come before the result and the client accepts `text/event-stream`.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JsonObject, JsonValue, RequestId } from '../jsonrpc/message';

/** A JSON-RPC message the bridge writes to an MCP client. */
export type McpWireMessage = JsonObject;

/** `{jsonrpc, id, error}` for an MCP client. */
export function mcpErrorResponse(id: RequestId, code: number, message: string, data?: JsonValue): McpWireMessage {
  const error: JsonObject = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}

/** Writes a JSON-RPC error with an HTTP status, and ends the response. */
export function sendHttpError(
  res: ServerResponse,
  status: number,
  id: RequestId,
  code: number,
  message: string,
  headers: OutgoingHttpHeaders = {},
): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify(mcpErrorResponse(id, code, message));
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** What the client's `Accept` header lets the bridge answer with. */
interface Accepts {
  readonly json: boolean;
  readonly eventStream: boolean;
}

function acceptsOf(req: IncomingMessage): Accepts {
  const accept = (req.headers.accept ?? '').toLowerCase();
  const json = accept === '' || accept.includes('application/json') || accept.includes('*/*') || accept.includes('application/*');
  return { json, eventStream: accept.includes('text/event-stream') };
}

/**
 * The answer to one MCP request over HTTP: notifications as SSE events while it runs (dropped when
 * the client does not accept `text/event-stream`), then exactly one final message. Anything written
 * after the final message, or after the client went away, is dropped.
 */
export class McpHttpReply {
  readonly #res: ServerResponse;
  readonly #accepts: Accepts;
  readonly #headers: OutgoingHttpHeaders;
  #isStreaming = false;

  /**
   * @param headers - extra headers of the answer (e.g. `Mcp-Session-Id`)
   */
  constructor(req: IncomingMessage, res: ServerResponse, headers: OutgoingHttpHeaders = {}) {
    this.#res = res;
    this.#accepts = acceptsOf(req);
    this.#headers = headers;
  }

  /** Whether nothing more can be written: the final message was written, or the client went away. */
  get isDone(): boolean {
    return this.#res.writableEnded || this.#res.destroyed;
  }

  /** Whether a message can still be sent before the final one: the client takes an event stream and is there. */
  get canSend(): boolean {
    return this.#accepts.eventStream && !this.isDone;
  }

  /** Calls `listener` once if the client goes away before the final message (it closed the request). */
  onAbandoned(listener: () => void): void {
    this.#res.once('close', () => {
      if (!this.#res.writableEnded) listener();
    });
  }

  /**
   * Sends a message before the final one (a notification, or a request the bridge makes of the
   * client) on the request's SSE stream, opened on the first; dropped unless {@link McpHttpReply.canSend}.
   */
  notify(message: McpWireMessage): void {
    if (!this.canSend) return;
    this.#openStream();
    this.#res.write(sseEvent(message));
  }

  /** Sends the final message (as JSON, or as the stream's last event) and ends the answer. */
  finish(message: McpWireMessage): void {
    if (this.isDone) return;
    if (!this.#isStreaming && this.#accepts.json) {
      const body = JSON.stringify(message);
      this.#res.writeHead(200, { ...this.#headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      this.#res.end(body);
      return;
    }
    this.#openStream();
    this.#res.end(sseEvent(message));
  }

  #openStream(): void {
    if (this.#isStreaming) return;
    this.#isStreaming = true;
    this.#res.writeHead(200, { ...this.#headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  }
}

function sseEvent(message: McpWireMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
