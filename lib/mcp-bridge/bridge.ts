/**
 * `McpBridge`: a proxy placed just before an agent without MCP-over-ACP, which gives the agent each
 * declared `acp` MCP server as an `http` server on a loopback endpoint (or a `stdio` relay to it)
 * and carries the agent's MCP requests to the providers as `mcp/message`.
 *
 * @packageDocumentation
 */
import { join } from 'node:path';
import { isProtocolVersion, type AcpVersion } from '../acp/negotiation';
import { SESSION_CANCEL_METHOD, SESSION_NEW_METHOD } from '../acp/methods';
import type { ProxyComponent } from '../chain/proxy';
import { sendProxiedMessageTo } from '../chain/forwarding';
import type { MessageTarget } from '../chain/successor';
import type { JsonObject, NotificationMessage } from '../jsonrpc/message';
import { INITIALIZE_METHOD } from '../jsonrpc/protocol';
import type { Responder } from '../requests/responder';
import { McpCaller } from '../mcp/caller';
import { MCP_MESSAGE_METHOD, mcpTransportsOf, withAcpMcpTransport, type McpServerDeclaration } from '../mcp/protocol';
import { AcpWireError } from '../jsonrpc/errors';
import { logLazily } from '../support/logger';
import {
  chooseBridgeTransport,
  declaresAcpServer,
  httpDeclaration,
  rewriteMcpServers,
  stdioDeclaration,
  type McpBridgeTransport,
  type McpRelayCommand,
} from './declarations';
import type { BridgedServer } from './bridged-server';
import { McpHttpEndpoint } from './endpoint';
import { AcpSessionRoutes, SESSION_CLOSE_METHOD, sessionIdOf } from './session-routes';

/** The ACP requests whose `mcpServers` the bridge rewrites. */
export const MCP_BRIDGE_SESSION_METHODS: readonly string[] = Object.freeze(['session/new', 'session/load', 'session/resume']);

/** Options of an {@link McpBridge}. */
export interface McpBridgeOptions {
  /** The transport to give the agent when it takes both `http` and `stdio` servers. Default `http`. */
  prefer?: McpBridgeTransport;
  /**
   * The stdio relay's program. Default: this Node.js (`process.execPath`) running the `acp-wire`
   * command installed with this library, `acp-wire mcp-stdio`.
   */
  relayCommand?: McpRelayCommand;
  /** The largest MCP message the endpoint reads, in bytes. Default 4 MiB. */
  maxBodyBytes?: number;
}

/**
 * Where the bridge stands: `pending` before the agent answered `initialize`; `passthrough` when the
 * agent supports `acp` servers itself; `http` or `stdio` when it bridges; `unavailable` when the
 * agent takes neither (then nothing is rewritten and `acp` is not advertised).
 */
export type McpBridgeMode = 'pending' | 'passthrough' | McpBridgeTransport | 'unavailable';

/** The `acp-wire` command next to this library (in `dist/`), run by the stdio relay declaration. */
export function defaultRelayCommand(): McpRelayCommand {
  return { command: process.execPath, args: [join(__dirname, '..', '..', 'bin', 'acp-wire.js'), 'mcp-stdio'] };
}

/**
 * Bridges MCP-over-ACP for an agent that does not support it, as the proxy just before the agent.
 *
 * @remarks
 * - On `proxy/initialize` it forwards `initialize` to the agent and reads its answer. An agent that
 *   advertises `acp` MCP servers is left alone: everything passes through untouched. Otherwise,
 *   when the agent accepts `http` or `stdio` servers, the answer goes upstream with `acp` added
 *   (v1 `mcpCapabilities.acp`, v2 `session.mcp.acp`): `acp` is advertised only when it can be
 *   delivered.
 * - When bridging, the `acp` entries of `mcpServers` in `session/new`, `session/load` and
 *   `session/resume` become `http` servers on a loopback endpoint the bridge owns (`127.0.0.1`, a
 *   random path and secret per declared server, sent as `Authorization: Bearer`), or `stdio`
 *   servers running `acp-wire mcp-stdio` with the URL and secret in their environment. Other
 *   entries pass unchanged. The endpoint starts with the first such request. Each ACP session gets
 *   its own route per server (`session/load` and `session/resume` of that session get the same one).
 * - A `session/cancel` is forwarded unchanged, then that session's MCP requests in flight are
 *   cancelled (`$/cancel_request` toward the provider, `-32800` to the agent's MCP client), whether
 *   or not the agent cancels them itself; other sessions' requests go on. `session/close` does the
 *   same, and frees the session's routes once the agent answered it.
 * - The endpoint speaks MCP revisions 2024-11-05 to 2025-11-25 (it answers `initialize`, `ping` and
 *   `notifications/initialized` itself, with `Mcp-Session-Id` sessions) and stateless 2026-07-28.
 *   Every other MCP request becomes an `mcp/message` toward the client direction; see
 *   docs/mcp-over-acp.md.
 * - It closes its endpoint when the proxy's connection closes; it does not close the connection.
 *
 * @example
 * ```ts
 * const bridge = new McpBridge(new ProxyComponent(connectStdio()));
 * ```
 */
export class McpBridge {
  /** The proxy the bridge runs on. */
  readonly proxy: ProxyComponent;
  readonly #options: Required<Omit<McpBridgeOptions, 'relayCommand'>> & { relayCommand: McpRelayCommand | undefined };
  readonly #caller: McpCaller;
  #mode: McpBridgeMode = 'pending';
  #version: AcpVersion = 1;
  #endpoint: Promise<McpHttpEndpoint> | undefined;
  readonly #routes = new AcpSessionRoutes();
  #closed: Promise<void> | undefined;
  readonly #whenClosed: Promise<void>;
  #markClosed!: () => void;

  /**
   * Installs the bridge on `proxy` (its `onInitialize` handler, and handlers for the session requests).
   *
   * @throws RangeError for a `maxBodyBytes` that is not a positive integer, or a `prefer` that is
   * neither `http` nor `stdio`
   */
  constructor(proxy: ProxyComponent, options: McpBridgeOptions = {}) {
    const { prefer = 'http', maxBodyBytes = 4 * 1024 * 1024, relayCommand } = options;
    if (prefer !== 'http' && prefer !== 'stdio') throw new RangeError('prefer must be "http" or "stdio"');
    if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1) throw new RangeError('maxBodyBytes must be a positive integer');
    this.proxy = proxy;
    this.#whenClosed = new Promise((resolve) => (this.#markClosed = resolve));
    this.#options = { prefer, maxBodyBytes, relayCommand };
    this.#caller = new McpCaller(proxy.client, { clientInfo: { name: 'acp-wire mcp-bridge', version: '1' } });
    proxy.onInitialize((params, responder) => this.#initialize(params, responder));
    for (const method of MCP_BRIDGE_SESSION_METHODS) {
      proxy.onClientRequest(method, (params, responder) => this.#sessionRequest(method, params, responder));
    }
    if (proxy.connection.isClosed) void this.close();
    else proxy.connection.once('close', () => void this.close());
  }

  /** Where the bridge stands (see {@link McpBridgeMode}). */
  get mode(): McpBridgeMode {
    return this.#mode;
  }

  /**
   * Resolves once the bridge is closed and its endpoint no longer listens: after
   * {@link McpBridge.close}, or once the proxy's connection closed. Never rejects.
   */
  get closed(): Promise<void> {
    return this.#whenClosed;
  }

  /** Stops the loopback endpoint, if it started: its MCP sessions end, its requests are cancelled. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const endpoint = await this.#endpoint?.catch(() => undefined);
      await endpoint?.close();
      this.#markClosed();
    })();
    return this.#closed;
  }

  /** `await using bridge = …`: {@link McpBridge.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #initialize(params: unknown, responder: Responder): Promise<unknown> {
    const sent = this.proxy.successor.sendRequest(INITIALIZE_METHOD, params);
    sent.forwardCancellationFrom(responder);
    const result = await sent;
    if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
    const version = (result as { protocolVersion?: unknown }).protocolVersion;
    if (!isProtocolVersion(version) || (version !== 1 && version !== 2)) return result;
    const transports = mcpTransportsOf(version, result);
    const transport = transports.acp ? undefined : chooseBridgeTransport(transports, this.#options.prefer);
    this.#mode = transports.acp ? 'passthrough' : (transport ?? 'unavailable');
    this.#version = version;
    logLazily(this.proxy.connection.logger, 'debug', () => `MCP-over-ACP bridge: ${this.#mode}`);
    if (!transport) return result;
    this.proxy.onClientNotification(MCP_MESSAGE_METHOD, (notification) => this.#caller.handleNotification(notification));
    this.proxy.onClientNotification(SESSION_CANCEL_METHOD, (params, message) => this.#cancelSession(params, message));
    this.proxy.onClientRequest(SESSION_CLOSE_METHOD, (params, responder) => this.#closeSession(params, responder));
    return withAcpMcpTransport(version, result as JsonObject);
  }

  #sessionRequest(method: string, params: unknown, responder: Responder): unknown {
    const isBridging = this.#mode === 'http' || this.#mode === 'stdio';
    if (!isBridging || !declaresAcpServer(params)) return sendProxiedMessageTo(this.proxy.successor, params, responder, method);
    // session/load and session/resume name their session; session/new learns it from the answer.
    const sessionId = method === SESSION_NEW_METHOD ? undefined : sessionIdOf(params);
    const declared: BridgedServer[] = [];
    const rewriting = rewriteMcpServers(params as JsonObject, (declaration) => this.#declare(declaration, sessionId, declared));
    return rewriting.then((rewritten) => {
      if (sessionId !== undefined) this.#routes.bind(sessionId, declared);
      const target =
        method === SESSION_NEW_METHOD
          ? this.#watchAnswer(
              (result) => this.#bindNewSession(result, declared),
              () => void this.#unserve(declared),
            )
          : this.proxy.successor;
      sendProxiedMessageTo(target, rewritten, responder, method);
    });
  }

  /** The route of a declared server in a session: the session's own (a load or resume), else a new one. */
  async #declare(declaration: McpServerDeclaration, sessionId: string | undefined, declared: BridgedServer[]): Promise<JsonObject> {
    const endpoint = await this.#startEndpoint();
    const known = sessionId === undefined ? undefined : this.#routes.get(sessionId, declaration.serverId);
    const server = known ?? endpoint.serve(declaration.serverId, declaration.name);
    declared.push(server);
    if (this.#mode === 'http') return httpDeclaration(declaration, server);
    return stdioDeclaration(declaration, server, this.#options.relayCommand ?? defaultRelayCommand(), this.#version);
  }

  #bindNewSession(result: unknown, declared: readonly BridgedServer[]): void {
    const sessionId = sessionIdOf(result);
    if (sessionId !== undefined) this.#routes.bind(sessionId, declared);
  }

  /** The successor, with `onResult` or `onError` called on the answer of the one request sent to it. */
  #watchAnswer(onResult: (result: unknown) => void, onError: () => void): MessageTarget {
    const successor = this.proxy.successor;
    return {
      sendRequest: (method, params, options) => {
        const sent = successor.sendRequest(method, params, options);
        sent.then(onResult, onError);
        return sent;
      },
      sendNotification: (method, params) => successor.sendNotification(method, params),
    };
  }

  /**
   * `session/cancel` goes on to the agent unchanged; then the session's MCP requests in flight are
   * cancelled, since an agent may leave them running (codex-acp does).
   */
  #cancelSession(params: unknown, message: NotificationMessage): void {
    sendProxiedMessageTo(this.proxy.successor, params, message);
    const sessionId = sessionIdOf(params);
    if (sessionId !== undefined) void this.#cancelRequests(sessionId, this.#routes.of(sessionId));
  }

  /** `session/close`: the session's MCP requests are cancelled at once, its routes freed once the agent closed it. */
  #closeSession(params: unknown, responder: Responder): void {
    const sessionId = sessionIdOf(params);
    const target =
      sessionId === undefined
        ? this.proxy.successor
        : this.#watchAnswer(
            () => void this.#unserve(this.#routes.forget(sessionId)),
            () => undefined,
          );
    sendProxiedMessageTo(target, params, responder, SESSION_CLOSE_METHOD);
    if (sessionId !== undefined) void this.#cancelRequests(sessionId, this.#routes.of(sessionId));
  }

  async #cancelRequests(sessionId: string, servers: readonly BridgedServer[]): Promise<void> {
    const endpoint = servers.length === 0 ? undefined : await this.#endpoint?.catch(() => undefined);
    if (!endpoint) return;
    const cancelled = servers.reduce((count, server) => count + endpoint.cancelRequests(server), 0);
    logLazily(
      this.proxy.connection.logger,
      'debug',
      () => `MCP-over-ACP bridge: session ${sessionId} stopped, ${cancelled} MCP requests cancelled`,
    );
  }

  async #unserve(servers: readonly BridgedServer[]): Promise<void> {
    const endpoint = servers.length === 0 ? undefined : await this.#endpoint?.catch(() => undefined);
    for (const server of servers) endpoint?.unserve(server);
  }

  #startEndpoint(): Promise<McpHttpEndpoint> {
    if (this.#closed) return Promise.reject(new McpBridgeClosedError());
    this.#endpoint ??= McpHttpEndpoint.listen({
      caller: this.#caller,
      maxBodyBytes: this.#options.maxBodyBytes,
      logger: this.proxy.connection.logger,
    });
    return this.#endpoint;
  }
}

/** A session request declared an `acp` server after the bridge was closed: there is no endpoint to give the agent. */
export class McpBridgeClosedError extends AcpWireError {
  /** Always `'McpBridgeClosedError'`. */
  override readonly name = 'McpBridgeClosedError';
  /** Always `'ACP_WIRE_MCP_BRIDGE_CLOSED'`. */
  readonly code = 'ACP_WIRE_MCP_BRIDGE_CLOSED';

  constructor() {
    super('the MCP-over-ACP bridge is closed: its loopback endpoint cannot serve a new MCP server');
  }
}
