/**
 * Calling MCP servers that an ACP peer declared with `type: "acp"`: one `mcp/message` request per
 * MCP request, its notifications routed back to it by `(serverId, requestId)`.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { RpcError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import type { SendRequestOptions, SentRequest } from '../requests/sent-request';
import type { Disposable } from '../support/disposable';
import {
  MCP_MESSAGE_METHOD,
  McpBindingErrorCode,
  parseMcpEnvelope,
  parseMcpOutcome,
  withMcpRequestMeta,
  type McpCallerIdentity,
  type McpOutcome,
} from './protocol';

/** Where a caller sends its requests: a `Connection`, or a proxy's client-direction target. */
export interface McpRequestTarget {
  /** Sends a request. */
  sendRequest(method: string, params?: unknown, options?: SendRequestOptions): SentRequest<unknown>;
}

/** A request-scoped MCP notification for an active request. */
export interface McpNotification {
  /** The inner MCP method (`notifications/progress`, …). */
  method: string;
  /** The inner params, if any. */
  params?: JsonObject;
}

/** Options of one {@link McpCaller.request}. */
export interface McpCallOptions {
  /** The inner request's id; default a fresh random one. Never reuse an id still active for the server. */
  requestId?: string;
  /** Aborting it sends `$/cancel_request` for the `mcp/message` (on this hop's id). */
  signal?: AbortSignal;
  /** Receives the request's notifications until it is answered. */
  onNotification?: (notification: McpNotification) => void;
  /** The envelope's own `_meta` (the inner one goes in `params._meta`). */
  _meta?: JsonObject;
}

/**
 * Sends MCP requests over ACP and routes their notifications back.
 *
 * @example
 * ```ts
 * const mcp = new McpCaller(connection, { clientInfo: { name: 'my-agent', version: '1.0.0' } });
 * mcp.listen(connection);
 * const outcome = await mcp.request(serverId, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
 * ```
 */
export class McpCaller {
  readonly #target: McpRequestTarget;
  readonly #identity: McpCallerIdentity;
  readonly #listeners = new Map<string, (notification: McpNotification) => void>();

  /**
   * @param target - where the `mcp/message` requests go (toward the providers)
   * @param identity - the MCP client identity sent in each request's inner `_meta`
   */
  constructor(target: McpRequestTarget, identity: McpCallerIdentity = {}) {
    this.#target = target;
    this.#identity = identity;
  }

  /** Routes the `mcp/message` notifications that arrive on `connection` to their requests. */
  listen(connection: Connection): Disposable {
    return connection.onNotification(MCP_MESSAGE_METHOD, (params) => this.handleNotification(params));
  }

  /** Routes one received `mcp/message` notification; one for no active request is dropped. */
  handleNotification(params: unknown): void {
    const envelope = parseMcpEnvelope(params);
    if (!envelope) return;
    const listener = this.#listeners.get(routeKey(envelope.serverId, envelope.requestId));
    listener?.(envelope.params === undefined ? { method: envelope.method } : { method: envelope.method, params: envelope.params });
  }

  /**
   * Sends one MCP request to server `serverId` and resolves with its inner outcome, `{result}` or
   * `{error}` (an MCP error is an outcome, not a rejection).
   *
   * @throws RpcError (rejects) with the binding's code: `-33001` no such server, `-32800`
   * cancelled, `-33000` too many active requests, `-33002` the server failed or answered no outcome
   */
  async request(serverId: string, method: string, params?: JsonObject, options: McpCallOptions = {}): Promise<McpOutcome> {
    const requestId = options.requestId ?? `mcp-request:${crypto.randomUUID()}`;
    const key = routeKey(serverId, requestId);
    if (this.#listeners.has(key)) throw new RangeError(`MCP request ${requestId} is already active for server ${serverId}`);
    this.#listeners.set(key, options.onNotification ?? ignore);
    try {
      const envelope: JsonObject = { serverId, requestId, method, params: withMcpRequestMeta(params, this.#identity) };
      if (options._meta !== undefined) envelope._meta = options._meta;
      const answer = await this.#target.sendRequest(MCP_MESSAGE_METHOD, envelope, options.signal ? { signal: options.signal } : undefined);
      const outcome = parseMcpOutcome(answer);
      if (!outcome) throw new RpcError(McpBindingErrorCode.BackendFailed, 'the `mcp/message` answer carries no MCP outcome');
      return outcome;
    } finally {
      this.#listeners.delete(key);
    }
  }
}

function ignore(): void {}

function routeKey(serverId: string, requestId: string): string {
  return JSON.stringify([serverId, requestId]);
}
