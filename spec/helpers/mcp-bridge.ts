/**
 * A chain for the MCP bridge specs: a client that provides MCP servers (an `McpProvider`), the
 * conductor, an `McpBridge` on a tapped in-process hop, and an in-process fake agent that
 * advertises the MCP transports a spec chooses; plus raw HTTP for acting as the agent's MCP client.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { Conductor, ProxyComponent, RpcError, createConnectionPair, type Connection, type JsonObject } from '../../lib';
import { McpBridge, type McpBridgeOptions } from '../../lib/mcp-bridge';
import { McpProvider, type McpOutcome, type McpRequestHandler, type McpRequestContext, type McpServerRegistration } from '../../lib/mcp';
import { sseEventData } from '../../lib/transports/remote/http/sse';
import { tappedPair, type TappedPair } from './peers';
import { ROOT } from './processes';

/** What a fake agent advertises: v1 booleans, or v2 objects for each listed transport. */
export interface FakeAgentOptions {
  version: 1 | 2;
  /** The MCP transports it takes besides stdio (v1 always takes stdio). */
  transports: readonly ('http' | 'stdio' | 'sse' | 'acp')[];
}

/** The `initialize` result of a fake agent. */
export function fakeInitializeResult({ version, transports }: FakeAgentOptions): JsonObject {
  if (version === 1) {
    const mcpCapabilities = {
      http: transports.includes('http'),
      sse: transports.includes('sse'),
      ...(transports.includes('acp') ? { acp: true } : {}),
    };
    return { protocolVersion: 1, agentCapabilities: { loadSession: true, mcpCapabilities }, authMethods: [] };
  }
  const mcp = Object.fromEntries(transports.filter((t) => t !== 'sse').map((t) => [t, {}]));
  return { protocolVersion: 2, capabilities: { session: { mcp } }, agentInfo: { name: 'fake-agent', version: '1.0.0' } };
}

/** The session messages a fake agent received, by method. */
export type ReceivedSessions = Record<'session/new' | 'session/load' | 'session/resume' | 'session/close' | 'session/cancel', JsonObject[]>;

/** A `cwd` that makes the fake agent refuse `session/new`. */
export const REFUSED_CWD = '/refused';

/**
 * Answers `initialize` and the session requests on `agent`, recording their params (and the
 * `session/cancel` notifications). `session/new` answers `s-1`, `s-2`, … in order, and an error
 * for the cwd {@link REFUSED_CWD}.
 */
export function serveFakeAgent(agent: Connection, options: FakeAgentOptions): ReceivedSessions {
  const received: ReceivedSessions = {
    'session/new': [],
    'session/load': [],
    'session/resume': [],
    'session/close': [],
    'session/cancel': [],
  };
  agent.onRequest('initialize', () => fakeInitializeResult(options));
  let sessions = 0;
  for (const method of ['session/new', 'session/load', 'session/resume', 'session/close'] as const) {
    agent.onRequest(method, (params) => {
      received[method].push(params as JsonObject);
      if (method !== 'session/new') return {};
      if ((params as { cwd?: unknown }).cwd === REFUSED_CWD) throw new RpcError(-32602, 'refused');
      return { sessionId: `s-${++sessions}` };
    });
  }
  agent.onNotification('session/cancel', (params) => void received['session/cancel'].push(params as JsonObject));
  return received;
}

/** The relay command of the compiled CLI (specs call `useBuild()`). */
export const RELAY_COMMAND = { command: process.execPath, args: [join(ROOT, 'dist', 'bin', 'acp-wire.js'), 'mcp-stdio'] };

/** A running chain: client (provider) → conductor → bridge (tapped hop) → fake agent. */
export interface BridgeChain {
  readonly client: TappedPair;
  /** The hop between the conductor (`left`) and the bridge (`right`): `fromRight` is what the bridge sent. */
  readonly hop: TappedPair;
  readonly provider: McpProvider;
  readonly bridge: McpBridge;
  readonly conductor: Conductor;
  readonly received: ReceivedSessions;
  /** The `tools` server: echo, progress, hang (until its signal aborts), and `server/discover` unanswered. */
  readonly tools: McpServerRegistration;
  /** Every context the `tools` handler was called with. */
  readonly calls: McpRequestContext[];
  close(): Promise<void>;
}

/** The `tools` server's handler. */
function toolsHandler(calls: McpRequestContext[]): McpRequestHandler {
  return async (context: McpRequestContext): Promise<McpOutcome> => {
    calls.push(context);
    const { method, params, signal } = context;
    if (method === 'tools/list') return { result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } };
    if (method !== 'tools/call') return { error: { code: -32601, message: `Method not found: ${method}` } };
    const args = (params?.arguments ?? {}) as { text?: string };
    if (params?.name === 'progress') context.notify('notifications/progress', { progressToken: 'p', progress: 1, total: 2 });
    if (params?.name === 'hang') {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return { result: { content: [{ type: 'text', text: 'late' }] } };
    }
    return { result: { content: [{ type: 'text', text: `echo ${String(args.text)}` }] } };
  };
}

/**
 * Resolves with the context of the next call of the `tools` handler that `matches` (a call already
 * made counts): an event-driven wait on {@link BridgeChain.calls}.
 */
export function callStarted(chain: BridgeChain, matches: (context: McpRequestContext) => boolean): Promise<McpRequestContext> {
  const made = chain.calls.find(matches);
  if (made) return Promise.resolve(made);
  return new Promise((resolve) => {
    const calls = chain.calls;
    const push = calls.push.bind(calls);
    calls.push = (...items: McpRequestContext[]) => {
      const found = items.find(matches);
      if (found) resolve(found);
      return push(...items);
    };
  });
}

/** Starts the chain, with the bridge's options and the fake agent's. */
export function startBridgeChain(agent: FakeAgentOptions, options: McpBridgeOptions = {}): BridgeChain {
  const client = tappedPair();
  const hop = tappedPair();
  const provider = new McpProvider();
  provider.serve(client.left);
  const calls: McpRequestContext[] = [];
  const tools = provider.register({ name: 'tools', serverId: 'tools-1', handler: toolsHandler(calls) });
  const bridge = new McpBridge(new ProxyComponent(hop.right), { relayCommand: RELAY_COMMAND, ...options });
  const [agentEnd, agentSide] = createConnectionPair();
  const received = serveFakeAgent(agentSide, agent);
  const conductor = new Conductor({ client: client.right, components: [{ connection: hop.left }, { connection: agentEnd }] });
  const close = async (): Promise<void> => {
    await conductor.close();
    await Promise.all([client.close(), hop.close(), agentSide.close(), bridge.close()]);
  };
  return { client, hop, provider, bridge, conductor, received, tools, calls, close };
}

/** An HTTP answer, read whole. */
export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Options of {@link httpPost}. */
export interface HttpPostOptions {
  headers?: Record<string, string>;
  method?: string;
  /** Called once the request is sent: destroying the request from here aborts it. */
  onSent?: (abort: () => void) => void;
}

/** Sends one HTTP request to a loopback URL (no keep-alive) and reads the whole answer. */
export function httpPost(url: string, body: unknown, options: HttpPostOptions = {}): Promise<HttpAnswer> {
  const text = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
    options.onSent?.(() => req.destroy());
  });
}

/** The data of each event of an SSE body. */
export function sseMessages(body: string): unknown[] {
  return body
    .split('\n\n')
    .filter((event) => event.includes('data:'))
    .map((event) => JSON.parse(event.slice(event.indexOf('data:') + 5).trim()) as unknown);
}

/** The `http` declaration the agent received for the `tools` server (in its first `session/new`). */
export function httpDeclarationOf(received: ReceivedSessions): { url: string; authorization: string } {
  const declaration = received['session/new'][0]!.mcpServers as unknown as { url: string; headers: { name: string; value: string }[] }[];
  return { url: declaration[0]!.url, authorization: declaration[0]!.headers[0]!.value };
}

/** A POST whose answer is read event by event as it comes. */
export interface OpenPost {
  /** The HTTP status and content type, once the answer's head arrived. */
  readonly head: Promise<{ status: number; contentType: string }>;
  /** The next JSON-RPC message of the answer (each SSE event, or the one JSON body); `undefined` at its end. */
  next(): Promise<unknown>;
  /** Closes the request (the client goes away). */
  abort(): void;
}

/** POSTs one message and reads its answer incrementally (see {@link OpenPost}). */
export function openPost(url: string, body: unknown, headers: Record<string, string>): OpenPost {
  const controller = new AbortController();
  const response = fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const messages = (async function* (): AsyncGenerator<unknown> {
    const answer = await response;
    if (!(answer.headers.get('content-type') ?? '').startsWith('text/event-stream')) return yield JSON.parse(await answer.text());
    for await (const data of sseEventData(answer.body!, 1 << 20)) yield JSON.parse(data) as unknown;
  })();
  return {
    head: response.then((answer) => ({ status: answer.status, contentType: answer.headers.get('content-type') ?? '' })),
    next: async () => (await messages.next()).value,
    abort: () => controller.abort(),
  };
}
