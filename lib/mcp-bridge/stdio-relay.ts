/**
 * The stdio side of the bridge (`acp-wire mcp-stdio`): an agent runs it as a stdio MCP server, and
 * it relays each line to the bridge's loopback endpoint and each answer back.
 *
 * @packageDocumentation
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { RequestId } from '../jsonrpc/message';
import { MCP_CANCELLED_NOTIFICATION, MCP_INITIALIZE_METHOD, MCP_PROTOCOL_VERSION_HEADER, MCP_SESSION_ID_HEADER } from './legacy-mcp';
import { requestKey } from './sessions';
import { DEFAULT_MAX_LINE_BYTES } from '../framing/ndjson';
import { sseEventData } from '../transports/remote/http/sse';

/** Options of {@link runMcpStdioRelay}. */
export interface McpStdioRelayOptions {
  /** The bridged server's URL on the bridge's endpoint. */
  url: string;
  /** Its secret, sent as `Authorization: Bearer`. */
  token: string;
  /** Where the MCP client's lines come from. Default `process.stdin`. */
  input?: Readable;
  /** Where the answers go, one JSON line each. Default `process.stdout`. */
  output?: Writable;
}

/** One parsed line from the MCP client. */
interface Line {
  readonly text: string;
  readonly id: RequestId | undefined;
  readonly method: string | undefined;
  readonly params: { requestId?: unknown; protocolVersion?: unknown } | undefined;
}

/**
 * Relays a stdio MCP client to the bridge's endpoint until its input ends, then ends the MCP
 * session. Resolves once every request was answered (or cancelled) and the session ended.
 *
 * @remarks
 * Each line is POSTed as it comes (after the `initialize` exchange, with its `Mcp-Session-Id`);
 * a JSON answer or each event of an SSE answer (progress, then the result) is written as one line.
 * A request the bridge makes of the client (an `input_required` round) arrives as an SSE event and
 * is written like the others; the client's answer line is POSTed like any other line.
 * A `notifications/cancelled` for a request in flight is not sent on: its HTTP request is aborted,
 * which the bridge turns into a `$/cancel_request` on its hop, and nothing is written for it. An
 * HTTP failure is answered to the client as a JSON-RPC error for the request's id.
 */
export async function runMcpStdioRelay(options: McpStdioRelayOptions): Promise<void> {
  const relay = new StdioRelay(options);
  const lines = createInterface({ input: options.input ?? process.stdin, crlfDelay: Infinity });
  for await (const text of lines) relay.accept(text);
  await relay.finish();
}

class StdioRelay {
  readonly #options: McpStdioRelayOptions;
  readonly #output: Writable;
  readonly #inFlight = new Map<string, AbortController>();
  readonly #running = new Set<Promise<void>>();
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  /** Settles when the `initialize` exchange is over; later lines wait for it (they need its session). */
  #handshake: Promise<void> = Promise.resolve();

  constructor(options: McpStdioRelayOptions) {
    this.#options = options;
    this.#output = options.output ?? process.stdout;
  }

  accept(text: string): void {
    if (text.trim() === '') return;
    const line = parseLine(text);
    if (!line) return this.#write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    if (line.method === MCP_CANCELLED_NOTIFICATION && line.id === undefined) {
      const requestId = line.params?.requestId;
      if (requestId !== undefined) this.#inFlight.get(requestKey(requestId as RequestId))?.abort();
      return;
    }
    const run = line.method === MCP_INITIALIZE_METHOD ? this.#post(line) : this.#handshake.then(() => this.#post(line));
    if (line.method === MCP_INITIALIZE_METHOD) this.#handshake = run;
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  async finish(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
    if (this.#sessionId === undefined) return;
    await fetch(this.#options.url, { method: 'DELETE', headers: this.#headers() }).then(
      (response) => response.body?.cancel(),
      () => undefined,
    );
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#options.token}` };
    if (this.#sessionId !== undefined) headers[MCP_SESSION_ID_HEADER] = this.#sessionId;
    if (this.#protocolVersion !== undefined) headers[MCP_PROTOCOL_VERSION_HEADER] = this.#protocolVersion;
    return headers;
  }

  async #post(line: Line): Promise<void> {
    const controller = new AbortController();
    // Only a request can be cancelled; a line with an id and no method is the client's answer to the bridge.
    const key = line.id === undefined || line.method === undefined ? undefined : requestKey(line.id);
    if (key !== undefined) this.#inFlight.set(key, controller);
    try {
      const response = await fetch(this.#options.url, {
        method: 'POST',
        headers: { ...this.#headers(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: line.text,
        signal: controller.signal,
      });
      await this.#answer(line, response);
    } catch (error) {
      if (!controller.signal.aborted && line.id !== undefined) this.#fail(line.id, `the MCP bridge could not be reached: ${String(error)}`);
    } finally {
      if (key !== undefined && this.#inFlight.get(key) === controller) this.#inFlight.delete(key);
    }
  }

  async #answer(line: Line, response: Response): Promise<void> {
    if (line.method === MCP_INITIALIZE_METHOD) this.#sessionId = response.headers.get(MCP_SESSION_ID_HEADER) ?? this.#sessionId;
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream') && response.body) {
      for await (const data of sseEventData(response.body, DEFAULT_MAX_LINE_BYTES)) this.#writeText(data, line);
      return;
    }
    const text = await response.text();
    if (type.startsWith('application/json') && text !== '') this.#writeText(text, line);
    else if (line.id !== undefined && response.status >= 400) this.#fail(line.id, `the MCP bridge answered HTTP ${response.status}`);
  }

  /** Writes one answer; remembers the revision an `initialize` result settled on. */
  #writeText(text: string, line: Line): void {
    let message: { id?: unknown; result?: { protocolVersion?: unknown } };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    const version = message.result?.protocolVersion;
    if (line.method === MCP_INITIALIZE_METHOD && typeof version === 'string') this.#protocolVersion = version;
    this.#write(message);
  }

  #fail(id: RequestId, message: string): void {
    this.#write({ jsonrpc: '2.0', id, error: { code: -32603, message } });
  }

  #write(message: unknown): void {
    this.#output.write(`${JSON.stringify(message)}\n`);
  }
}

function parseLine(text: string): Line | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { text, id: undefined, method: undefined, params: undefined };
  const message = value as { id?: RequestId; method?: unknown; params?: unknown };
  const params = typeof message.params === 'object' && message.params !== null ? (message.params as Line['params']) : undefined;
  return { text, id: message.id, method: typeof message.method === 'string' ? message.method : undefined, params };
}
