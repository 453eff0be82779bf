/**
 * Providing MCP servers over ACP: a registry of servers by `serverId` that answers the
 * `mcp/message` requests addressed to them, one handler call per request, with a signal, a limit
 * on active requests and request-scoped notifications.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { AcpWireError, RpcError } from '../jsonrpc/errors';
import type { JsonObject, JsonValue } from '../jsonrpc/message';
import type { Responder } from '../requests/responder';
import { toDisposable, type Disposable } from '../support/disposable';
import {
  MCP_MESSAGE_METHOD,
  McpBindingErrorCode,
  parseMcpEnvelope,
  type McpEnvelope,
  type McpOutcome,
  type McpServerDeclaration,
} from './protocol';
import { McpRequestRun, type McpRequestHandler } from './request-run';

export type { McpRequestContext, McpRequestHandler } from './request-run';

/** How a provided server is registered. */
export interface McpServerOptions {
  /** The server's name, as declared in `mcpServers`. */
  name: string;
  /** Answers each MCP request addressed to the server. */
  handler: McpRequestHandler;
  /** The declared `serverId`; default a fresh random one. An id is registered once per provider. */
  serverId?: string;
  /** Requests the server handles at once; one more is refused `-33000`. Default 64. */
  maxActiveRequests?: number;
}

/** Where a provider sends request-scoped notifications: toward the caller. */
export interface McpNotificationSink {
  /** Sends one notification. */
  sendNotification(method: string, params?: unknown): void;
}

/** One registered server. */
interface ServerEntry {
  readonly serverId: string;
  readonly handler: McpRequestHandler;
  readonly maxActiveRequests: number;
  readonly active: Map<string, McpRequestRun>;
}

/**
 * A registered server: its declaration to put in a session's `mcpServers`, and its end.
 */
export class McpServerRegistration {
  /** The server's name. */
  readonly name: string;
  /** The server's id, unique in its provider. */
  readonly serverId: string;
  readonly #release: () => Promise<void>;

  /** @internal */
  constructor(name: string, serverId: string, release: () => Promise<void>) {
    this.name = name;
    this.serverId = serverId;
    this.#release = release;
  }

  /** `{type: "acp", name, serverId}`: what goes in `session/new` (or `load`, `resume`) `mcpServers`. */
  get declaration(): McpServerDeclaration {
    return { type: 'acp', name: this.name, serverId: this.serverId };
  }

  /**
   * Unregisters the server: later requests for it are not this provider's (`-33001` at the end of
   * the route), active ones are cancelled; resolves when their handlers have settled.
   */
  dispose(): Promise<void> {
    return this.#release();
  }

  /** Same as {@link McpServerRegistration.dispose}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

/**
 * The MCP servers one ACP endpoint provides (a client, or a proxy: see `ProxyComponent.serveMcp`).
 *
 * @example
 * ```ts
 * const mcp = new McpProvider();
 * const tools = mcp.register({ name: 'tools', handler: async ({ method, params }) => ({ result: … }) });
 * mcp.serve(client.connection);
 * await client.newSession({ cwd, mcpServers: [tools.declaration] });
 * ```
 */
export class McpProvider {
  readonly #servers = new Map<string, ServerEntry>();
  readonly #usedIds = new Set<string>();

  /**
   * Registers a server; it answers as soon as this returns, so declare it only afterwards.
   *
   * @throws RangeError for a `maxActiveRequests` that is not a positive integer
   * @throws Error with code `ACP_WIRE_MCP_SERVER_ID_TAKEN` for an id this provider already used
   */
  register(options: McpServerOptions): McpServerRegistration {
    const { name, handler, serverId = `${name}:${crypto.randomUUID()}`, maxActiveRequests = 64 } = options;
    if (typeof handler !== 'function') throw new TypeError('handler must be a function');
    if (!Number.isInteger(maxActiveRequests) || maxActiveRequests < 1) throw new RangeError('maxActiveRequests must be a positive integer');
    if (this.#usedIds.has(serverId)) throw new McpServerIdTakenError(serverId);
    this.#usedIds.add(serverId);
    const entry: ServerEntry = { serverId, handler, maxActiveRequests, active: new Map() };
    this.#servers.set(serverId, entry);
    return new McpServerRegistration(name, serverId, () => this.#unregister(entry));
  }

  /** Whether a server with this id is registered now. */
  has(serverId: string): boolean {
    return this.#servers.has(serverId);
  }

  /**
   * Answers `mcp/message` requests on `connection` as the end of the route: the agent (or a peer
   * that calls like one) sends them plainly. A request for a server this provider does not have is
   * answered `-33001`; a malformed one `-32602`.
   *
   * @returns the registration of the handler (dispose it to stop serving)
   */
  serve(connection: Connection): Disposable {
    const registration = connection.onRequest(MCP_MESSAGE_METHOD, (params, responder) => {
      const envelope = parseMcpEnvelope(params);
      if (!envelope) throw RpcError.invalidParams('malformed `mcp/message` params');
      const answer = this.answer(envelope, responder, connection);
      if (!answer) throw serverUnavailable(envelope.serverId);
      return answer;
    });
    return toDisposable(() => registration[Symbol.dispose]());
  }

  /**
   * Answers one `mcp/message` request if its server is registered here; `undefined` when it is not
   * (a proxy then forwards it). Notifications of the request go to `notifications`.
   *
   * @returns the carrier to answer with (or a rejection with the binding's `RpcError`)
   */
  answer(envelope: McpEnvelope, responder: Responder, notifications: McpNotificationSink): Promise<JsonObject> | undefined {
    const server = this.#servers.get(envelope.serverId);
    if (!server) return undefined;
    if (server.active.has(envelope.requestId)) {
      return Promise.reject(
        new RpcError(McpBindingErrorCode.InvalidParams, 'duplicate active MCP request id', {
          serverId: envelope.serverId,
          requestId: envelope.requestId,
        }),
      );
    }
    if (server.active.size >= server.maxActiveRequests) {
      return Promise.reject(
        new RpcError(McpBindingErrorCode.ResourceLimitExceeded, 'MCP server has too many active requests', { serverId: envelope.serverId }),
      );
    }
    const run = new McpRequestRun(envelope, responder.signal, (method, params) =>
      notifications.sendNotification(MCP_MESSAGE_METHOD, notificationParams(envelope, method, params)),
    );
    server.active.set(envelope.requestId, run);
    return run
      .start(server.handler)
      .then(carrierOf)
      .finally(() => server.active.delete(envelope.requestId));
  }

  async #unregister(entry: ServerEntry): Promise<void> {
    if (this.#servers.get(entry.serverId) !== entry) return;
    this.#servers.delete(entry.serverId);
    // Each active run is aborted directly: one shared signal would carry a listener per active
    // request (Node warns past ten).
    const reason = new Error(`MCP server ${entry.serverId} was unregistered`);
    for (const run of entry.active.values()) run.abort(reason);
    await Promise.allSettled([...entry.active.values()].map((run) => run.settled));
  }
}

function carrierOf(outcome: McpOutcome): JsonObject {
  return outcome as unknown as JsonObject;
}

function notificationParams(envelope: McpEnvelope, method: string, params: JsonObject | undefined): JsonObject {
  const out: JsonObject = { serverId: envelope.serverId, requestId: envelope.requestId, method };
  if (params !== undefined) out.params = params as JsonValue;
  return out;
}

/** The answer for a server nobody on the route provides. */
export function serverUnavailable(serverId: string): RpcError {
  return new RpcError(McpBindingErrorCode.ServerUnavailable, 'no MCP server with this serverId', { serverId });
}

/** {@link McpProvider.register} was given a `serverId` the provider already used. */
export class McpServerIdTakenError extends AcpWireError {
  /** Always `'McpServerIdTakenError'`. */
  override readonly name = 'McpServerIdTakenError';
  /** Always `'ACP_WIRE_MCP_SERVER_ID_TAKEN'`. */
  readonly code = 'ACP_WIRE_MCP_SERVER_ID_TAKEN';
  /** The id. */
  readonly serverId: string;

  /** @param serverId - the id that was registered before */
  constructor(serverId: string) {
    super(`MCP server id ${serverId} was already registered with this provider`);
    this.serverId = serverId;
  }
}
