/**
 * Serving tools written with the official MCP server library (`@modelcontextprotocol/server`) over
 * MCP-over-ACP: each `mcp/message` request becomes one exchange of the library's own stateless
 * (revision 2026-07-28) pipeline, in process, answered by a fresh server instance.
 *
 * The library is an optional peer dependency: it is required the first time
 * {@link mcpServerHandler} is called, never when `acp-wire` itself is loaded.
 *
 * @packageDocumentation
 */
import type * as McpServerLibrary from '@modelcontextprotocol/server';
import { AcpWireError } from '../jsonrpc/errors';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import { DEFAULT_MAX_LINE_BYTES } from '../framing/ndjson';
import { sseEventData } from '../transports/remote/http/sse';
import { parseMcpOutcome, type McpOutcome } from './protocol';
import type { McpRequestContext, McpRequestHandler } from './request-run';

/** The npm name of the MCP server library the adapter drives. */
export const MCP_SERVER_LIBRARY = '@modelcontextprotocol/server';

/**
 * What the adapter needs of a server object from the MCP server library: its `McpServer` and its
 * low-level `Server` both fit. Declared here so that acp-wire's types do not require the library.
 */
export interface McpLibraryServer {
  /** Attaches the server to one transport (the library's own per-request one). */
  connect(transport: never): Promise<void>;
  /** Detaches it. */
  close(): Promise<void>;
}

/**
 * Makes the server that answers one MCP request: a fresh `McpServer` (or `Server`) with its tools,
 * resources and prompts registered, as the library requires for revision 2026-07-28.
 */
export type McpLibraryServerFactory = (context: McpRequestContext) => McpLibraryServer | Promise<McpLibraryServer>;

/** Options of {@link mcpServerHandler}. */
export interface McpServerHandlerOptions {
  /** Receives the library's out-of-band errors and the requests it rejected (reporting only). */
  onError?: (error: Error) => void;
}

/** The handler {@link mcpServerHandler} made, and the end of the library exchanges it runs. */
export interface McpServerHandler {
  /** Give it to `McpProvider.register({ name, handler })`. */
  readonly handler: McpRequestHandler;
  /** Aborts the exchanges still running and closes their server instances. */
  close(): Promise<void>;
  /** Same as {@link McpServerHandler.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** `@modelcontextprotocol/server` could not be required: install it next to acp-wire. */
export class McpServerLibraryMissingError extends AcpWireError {
  /** Always `'McpServerLibraryMissingError'`. */
  override readonly name = 'McpServerLibraryMissingError';
  /** Always `'ACP_WIRE_MCP_SERVER_LIBRARY_MISSING'`. */
  readonly code = 'ACP_WIRE_MCP_SERVER_LIBRARY_MISSING';

  /** @param cause - the error `require` threw */
  constructor(cause: unknown) {
    super(`${MCP_SERVER_LIBRARY} is not installed; \`npm install ${MCP_SERVER_LIBRARY}\` to serve MCP servers written with it`, {
      cause,
    });
  }
}

function loadLibrary(): typeof McpServerLibrary {
  try {
    return require(MCP_SERVER_LIBRARY) as typeof McpServerLibrary;
  } catch (error) {
    throw new McpServerLibraryMissingError(error);
  }
}

/**
 * Answers MCP requests with servers written with the official MCP server library.
 *
 * @remarks
 * - Each request is one exchange of the library's stateless entry (`createMcpHandler`, modern only:
 *   2025-era traffic is refused), in process: no socket, no port. `factory` makes the server for
 *   that one request; it receives the request's {@link McpRequestContext}.
 * - No MCP `initialize` is needed or accepted: revision 2026-07-28 carries the client's revision,
 *   capabilities and info in each request's `params._meta`, and the library's `server/discover`
 *   answers discovery.
 * - The caller's `requestId` is the inner JSON-RPC id of the exchange. Exchanges never share a server
 *   instance, so equal ids from different callers cannot meet.
 * - Notifications the server relates to the request (progress, log messages) go to the caller
 *   through `context.notify`, in order, before the answer.
 * - When `context.signal` aborts (the caller cancelled, the server was unregistered, the
 *   connection closed), the exchange is aborted: the library aborts the tool's `ctx.mcpReq.signal`,
 *   which is revision 2026-07-28's cancellation, and the provider answers `-32800`.
 * - An MCP error (unknown tool, invalid params, a rejected header) is the outcome `{error}`. An
 *   exchange that ends without a JSON-RPC answer fails the request (`-33002` at the provider).
 * - Tools whose input schema declares `x-mcp-header` annotations are refused by the library: the
 *   adapter does not mirror parameters into `Mcp-Param-*` headers.
 * - The library is required on the first call, not when acp-wire is loaded.
 *
 * @throws McpServerLibraryMissingError when `@modelcontextprotocol/server` cannot be required
 *
 * @example
 * ```ts
 * import { McpServer } from '@modelcontextprotocol/server';
 * import * as z from 'zod';
 *
 * const tools = mcpServerHandler(() => {
 *   const server = new McpServer({ name: 'project-tools', version: '1.0.0' });
 *   server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
 *     content: [{ type: 'text', text }],
 *   }));
 *   return server;
 * });
 * const registration = provider.register({ name: 'project-tools', handler: tools.handler });
 * ```
 */
export function mcpServerHandler(factory: McpLibraryServerFactory, options: McpServerHandlerOptions = {}): McpServerHandler {
  if (typeof factory !== 'function') throw new TypeError('factory must be a function');
  const library = loadLibrary();
  const contexts = new WeakMap<Request, McpRequestContext>();
  // The exchanges' requests, held until each settles: a `Request` follows `context.signal` only while
  // it is alive (the runtime ties them through a weak reference), and the library keeps its signal,
  // not the request. A collected request would leave a long exchange (a `subscriptions/listen`
  // stream) deaf to cancellation, holding its slot for ever.
  const live = new Set<Request>();
  const exchanges = library.createMcpHandler(
    async (libraryContext) => {
      const context = libraryContext.requestInfo && contexts.get(libraryContext.requestInfo);
      if (!context) throw new Error('an MCP exchange that the adapter did not start');
      return (await factory(context)) as unknown as McpServerLibrary.McpServer;
    },
    { legacy: 'reject', responseMode: 'auto', keepAliveMs: 0, ...(options.onError ? { onerror: options.onError } : {}) },
  );
  const handler: McpRequestHandler = async (context) => {
    if (!isHeaderText(context.method)) return { error: { code: -32601, message: `Method not found: ${context.method}` } };
    const body = exchangeBody(context);
    // The body goes as `parsedBody`: the library reads it from there, never serialized.
    const request = new Request('http://mcp-over-acp.invalid/', {
      method: 'POST',
      headers: exchangeHeaders(context),
      signal: context.signal,
    });
    contexts.set(request, context);
    live.add(request);
    try {
      const response = await exchanges.fetch(request, { parsedBody: body });
      return await outcomeOf(response, context);
    } finally {
      live.delete(request);
    }
  };
  const close = (): Promise<void> => exchanges.close();
  return { handler, close, [Symbol.asyncDispose]: close };
}

/** The inner JSON-RPC request of one exchange. */
function exchangeBody(context: McpRequestContext): JsonObject {
  const body: JsonObject = { jsonrpc: '2.0', id: context.requestId, method: context.method };
  if (context.params !== undefined) body.params = context.params;
  return body;
}

/** The params field each method names in `Mcp-Name` (revision 2026-07-28, Streamable HTTP). */
const NAMED_BY: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/** The headers the library checks against the body, as an MCP HTTP client would send them. */
function exchangeHeaders(context: McpRequestContext): Headers {
  const headers = new Headers({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': context.protocolVersion,
    'mcp-method': context.method,
  });
  const field = NAMED_BY[context.method];
  const name = field === undefined ? undefined : context.params?.[field];
  if (typeof name === 'string') headers.set('mcp-name', headerValue(name));
  return headers;
}

/** Printable ASCII without surrounding spaces: a header value as it is. */
function isHeaderText(value: string): boolean {
  return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value);
}

/** A header value for any text: as it is, or in the MCP `=?base64?…?=` form. */
function headerValue(text: string): string {
  return isHeaderText(text) && !text.startsWith('=?base64?') ? text : `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/** The outcome of one exchange: its JSON answer, or the answer at the end of its event stream. */
async function outcomeOf(response: Response, context: McpRequestContext): Promise<McpOutcome> {
  const type = response.headers.get('content-type') ?? '';
  if (response.body && type.startsWith('text/event-stream')) return streamedOutcome(response.body, context);
  if (type.startsWith('application/json')) return answerOutcome((await response.json()) as JsonValue, context);
  await response.body?.cancel().catch(() => undefined);
  context.signal.throwIfAborted();
  throw new Error(`the MCP server library answered HTTP ${response.status} without a JSON-RPC answer`);
}

async function streamedOutcome(body: ReadableStream<Uint8Array>, context: McpRequestContext): Promise<McpOutcome> {
  for await (const data of sseEventData(body, DEFAULT_MAX_LINE_BYTES)) {
    const message = JSON.parse(data) as JsonValue;
    if (!isJsonObject(message)) continue;
    if (Object.hasOwn(message, 'result') || Object.hasOwn(message, 'error')) return answerOutcome(message, context);
    // Revision 2026-07-28 has no server-to-client requests: only notifications (no id) are related.
    if (typeof message.method === 'string' && !Object.hasOwn(message, 'id')) {
      context.notify(message.method, isJsonObject(message.params) ? message.params : undefined);
    }
  }
  context.signal.throwIfAborted();
  throw new Error('the MCP server library ended the exchange without a JSON-RPC answer');
}

/** The inner outcome of a JSON-RPC answer, without its framing (`jsonrpc`, `id`). */
function answerOutcome(answer: JsonValue, context: McpRequestContext): McpOutcome {
  const outcome = isJsonObject(answer) ? parseMcpOutcome(answer) : undefined;
  // An answer refused before dispatch may carry no id (`null` or absent); any other must be ours.
  const id = isJsonObject(answer) ? answer.id : undefined;
  const isOurs = id === context.requestId || ((id === undefined || id === null) && outcome !== undefined && 'error' in outcome);
  if (!outcome || !isOurs) throw new Error('the MCP server library answered with an invalid JSON-RPC response');
  return 'error' in outcome ? { error: outcome.error } : { result: outcome.result };
}
