/**
 * One POST to the bridge's endpoint: its body read within a limit, one JSON-RPC message classified,
 * the handshake and `ping` answered here, every other request forwarded over ACP.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJsonObject, validKindOf, type JsonObject, type RequestId } from '../jsonrpc/message';
import { MCP_META_CLIENT_CAPABILITIES, MCP_META_CLIENT_INFO, MCP_META_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from '../mcp/protocol';
import type { BridgedServer, McpHttpEndpointOptions, ServedRoute } from './bridged-server';
import { bindingErrorResponse, forwardMcpRequest } from './forward';
import { clientHandshakeOf, initializeResult } from './handshake';
import {
  MCP_CANCELLED_NOTIFICATION,
  MCP_INITIALIZE_METHOD,
  MCP_PING_METHOD,
  MCP_PROTOCOL_VERSION_HEADER,
  MCP_SESSION_ID_HEADER,
  isStatelessRevision,
  unsupportedRevisionReason,
} from './legacy-mcp';
import { MCP_SET_LEVEL_METHOD, answerSetLevel, withSessionLogLevel } from './session-logging';
import { McpHttpReply, sendHttpError } from './reply';
import { requestKey, type McpSession, type McpSessions } from './sessions';

/** One JSON-RPC message an MCP client POSTed. */
interface Posted {
  readonly id: RequestId | undefined;
  /** The method; `undefined` for a response (the client's answer to a request of the bridge). */
  readonly method: string | undefined;
  readonly params: JsonObject | undefined;
  /** The message as it came. */
  readonly message: JsonObject;
}

/** Handles one POST. @internal */
export class McpPost {
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #server: BridgedServer;
  readonly #inFlight: Set<AbortController>;
  readonly #sessions: McpSessions;
  readonly #options: McpHttpEndpointOptions;

  constructor(req: IncomingMessage, res: ServerResponse, route: ServedRoute, sessions: McpSessions, options: McpHttpEndpointOptions) {
    this.#req = req;
    this.#res = res;
    this.#server = route.server;
    this.#inFlight = route.inFlight;
    this.#sessions = sessions;
    this.#options = options;
  }

  /** Reads, checks and answers the POST. Never rejects for the client's mistakes (they are answered). */
  async run(): Promise<void> {
    const mediaType = this.#req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (mediaType !== 'application/json') return this.#refuse(415, null, -32600, 'Unsupported Media Type: send application/json');
    const body = await this.#readBody();
    if (body === undefined) return;
    const posted = this.#parse(body);
    if (!posted) return;
    // `initialize` negotiates the revision in its body; every later message names it in the header.
    const unsupported =
      posted.method === MCP_INITIALIZE_METHOD ? undefined : unsupportedRevisionReason(this.#header(MCP_PROTOCOL_VERSION_HEADER));
    if (unsupported) return this.#refuse(400, posted.id ?? null, -32600, unsupported);
    if (posted.method === undefined) return this.#clientAnswer(posted);
    if (posted.id === undefined) return this.#notification(posted);
    if (posted.method === MCP_INITIALIZE_METHOD) return this.#initialize(posted.id, posted.params);
    return this.#request(posted.id, posted.method, posted.params);
  }

  /** A request: answered here (`ping`, a session's `logging/setLevel`) or forwarded over ACP. */
  async #request(id: RequestId, method: string, params: JsonObject | undefined): Promise<void> {
    const session = this.#session();
    if (session === null) return;
    if (!session && !isStatelessRevision(this.#header(MCP_PROTOCOL_VERSION_HEADER), params)) {
      return this.#refuse(400, id, -32600, 'Bad Request: send initialize first, then its Mcp-Session-Id header');
    }
    const reply = new McpHttpReply(this.#req, this.#res);
    if (method === MCP_PING_METHOD) return reply.finish({ jsonrpc: '2.0', id, result: {} });
    if (session && method === MCP_SET_LEVEL_METHOD) return reply.finish(answerSetLevel(id, params, session));
    await forwardMcpRequest({
      caller: this.#options.caller,
      serverId: this.#server.serverId,
      serverName: this.#server.name,
      id,
      method,
      params: session ? withSessionMeta(params, session) : params,
      reply,
      session,
      inFlight: this.#inFlight,
    });
  }

  #header(name: string): string | undefined {
    const value = this.#req.headers[name];
    return typeof value === 'string' ? value : undefined;
  }

  #refuse(status: number, id: RequestId, code: number, message: string): void {
    this.#req.resume();
    sendHttpError(this.#res, status, id, code, message);
  }

  /** The request's session: `undefined` without the header, `null` (answered 404) for an unknown one. */
  #session(): McpSession | undefined | null {
    const id = this.#header(MCP_SESSION_ID_HEADER);
    if (id === undefined) return undefined;
    const session = this.#sessions.get(id, this.#server.route);
    if (session) return session;
    sendHttpError(this.#res, 404, null, -32001, 'Session not found: initialize again');
    return null;
  }

  async #readBody(): Promise<string | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of this.#req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > this.#options.maxBodyBytes) {
          this.#refuse(413, null, -32600, `Payload Too Large: at most ${this.#options.maxBodyBytes} bytes`);
          return undefined;
        }
        chunks.push(chunk);
      }
    } catch {
      // The client went away while sending: there is nobody to answer.
      return undefined;
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** The one message of the body; `undefined` when it was refused (answered 400). */
  #parse(body: string): Posted | undefined {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return void sendHttpError(this.#res, 400, null, -32700, 'Parse error');
    }
    if (Array.isArray(value)) return void sendHttpError(this.#res, 400, null, -32600, 'Invalid Request: batches are not supported');
    const kind = validKindOf(value);
    const message = value as { id?: RequestId; method?: string; params?: unknown };
    if (kind === undefined || (message.params !== undefined && !isJsonObject(message.params))) {
      return void sendHttpError(this.#res, 400, null, -32600, 'Invalid Request: one JSON-RPC message with object params');
    }
    const posted = value as JsonObject;
    if (kind === 'response') return { id: message.id, method: undefined, params: undefined, message: posted };
    const params = message.params as JsonObject | undefined;
    return { id: kind === 'request' ? message.id : undefined, method: message.method, params, message: posted };
  }

  /** A notification: `notifications/cancelled` cancels its request; every one is accepted (202). */
  #notification(posted: Posted): void {
    const session = this.#session();
    if (session === null) return;
    const requestId = posted.params?.requestId;
    if (session && posted.method === MCP_CANCELLED_NOTIFICATION && requestId !== undefined && requestId !== null) {
      session.active.get(requestKey(requestId as RequestId))?.abort();
    }
    this.#res.writeHead(202).end();
  }

  /** The client's answer to a request the bridge sent it in its session: handed to whoever awaits it; accepted (202). */
  #clientAnswer(posted: Posted): void {
    const session = this.#session();
    if (session === null) return;
    if (session && posted.id !== undefined && posted.id !== null) session.awaitedAnswers.get(requestKey(posted.id))?.(posted.message);
    this.#res.writeHead(202).end();
  }

  async #initialize(id: RequestId, params: JsonObject | undefined): Promise<void> {
    const handshake = clientHandshakeOf(params);
    let result: JsonObject;
    try {
      result = await initializeResult(this.#options.caller, this.#server, handshake);
    } catch (error) {
      const reply = new McpHttpReply(this.#req, this.#res);
      return reply.finish(bindingErrorResponse(id, this.#server.name, error));
    }
    const session = this.#sessions.open(this.#server.route, { ...handshake, capabilities: result.capabilities as JsonObject });
    new McpHttpReply(this.#req, this.#res, { [MCP_SESSION_ID_HEADER]: session.id }).finish({ jsonrpc: '2.0', id, result });
  }
}

/**
 * A session's request params as revision 2026-07-28 wants them: the session's client capabilities
 * and info, the revision, and the session's log level once set, in `_meta` (beside what the client
 * put there, e.g. `progressToken`).
 */
export function withSessionMeta(params: JsonObject | undefined, session: McpSession): JsonObject {
  const meta: JsonObject = { ...(isJsonObject(params?._meta) ? params._meta : {}) };
  meta[MCP_META_PROTOCOL_VERSION] = MCP_PROTOCOL_VERSION;
  meta[MCP_META_CLIENT_CAPABILITIES] = session.clientCapabilities;
  if (session.clientInfo !== undefined) meta[MCP_META_CLIENT_INFO] = session.clientInfo;
  return { ...params, _meta: withSessionLogLevel(meta, session) };
}
