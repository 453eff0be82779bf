/**
 * One MCP request from an agent's MCP client, sent on as an `mcp/message` toward the providers and
 * answered from its carrier: exactly one outcome per request, cancellation carried both ways.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { RpcError, describeThrown } from '../jsonrpc/errors';
import type { JsonObject, JsonValue, RequestId } from '../jsonrpc/message';
import type { McpCaller, McpNotification } from '../mcp/caller';
import { McpBindingErrorCode, type McpOutcome } from '../mcp/protocol';
import { mcpErrorResponse, type McpHttpReply, type McpWireMessage } from './reply';
import { requestKey } from './sessions';

/** One MCP request to forward. */
export interface McpForward {
  /** Sends the `mcp/message` requests. */
  readonly caller: McpCaller;
  /** The declared server it is for. */
  readonly serverId: string;
  /** The server's declared name, for error messages. */
  readonly serverName: string;
  /** The MCP request's id (the client's), method and params (with the 2026-07-28 `_meta`). */
  readonly id: RequestId;
  readonly method: string;
  readonly params: JsonObject | undefined;
  /** Where the answer goes. */
  readonly reply: McpHttpReply;
  /** The client's requests in flight, for `notifications/cancelled` (a session's), if any. */
  readonly active: Map<string, AbortController> | undefined;
  /** The route's requests in flight (what a `session/cancel` of its ACP session aborts). */
  readonly inFlight: Set<AbortController>;
}

/** The JSON-RPC code an MCP client gets for a request that was cancelled. */
const REQUEST_CANCELLED = -32800;

/**
 * Forwards one MCP request and answers it once.
 *
 * @remarks
 * The `mcp/message` gets a fresh `requestId`, the same on every hop. When the client goes away
 * (closes the HTTP request), cancels it (`notifications/cancelled`), or the bridge cancels the
 * route's requests (a `session/cancel` of its ACP session), the `mcp/message` is
 * cancelled on this hop (`$/cancel_request` with its outer id) and a result that arrives later is
 * dropped; a client still connected gets a `-32800` answer at once. Resolves once answered; never
 * rejects.
 */
export async function forwardMcpRequest(forward: McpForward): Promise<void> {
  const { reply, active, inFlight, id } = forward;
  const controller = new AbortController();
  reply.onAbandoned(() => controller.abort());
  const key = requestKey(id);
  active?.set(key, controller);
  inFlight.add(controller);
  const cancelled = new Promise<undefined>((resolve) =>
    controller.signal.addEventListener('abort', () => resolve(undefined), { once: true }),
  );
  const answered = forward.caller
    .request(forward.serverId, forward.method, forward.params, {
      requestId: `mcp-bridge:${randomUUID()}`,
      signal: controller.signal,
      onNotification: (notification) => {
        if (!controller.signal.aborted) reply.notify(notificationMessage(notification));
      },
    })
    .then(
      (outcome) => responseOf(id, outcome),
      (error: unknown) => bindingErrorResponse(id, forward.serverName, error),
    );
  try {
    const response = await Promise.race([answered, cancelled]);
    reply.finish(response && !controller.signal.aborted ? response : mcpErrorResponse(id, REQUEST_CANCELLED, 'Request cancelled'));
  } finally {
    if (active?.get(key) === controller) active.delete(key);
    inFlight.delete(controller);
  }
}

function notificationMessage(notification: McpNotification): McpWireMessage {
  const message: McpWireMessage = { jsonrpc: '2.0', method: notification.method };
  if (notification.params !== undefined) message.params = notification.params;
  return message;
}

/** The MCP response for a carrier: `{result}` becomes the result, `{error}` the error. */
export function responseOf(id: RequestId, outcome: McpOutcome): McpWireMessage {
  if ('result' in outcome) return { jsonrpc: '2.0', id, result: outcome.result };
  return { jsonrpc: '2.0', id, error: outcome.error as unknown as JsonValue };
}

/** Why a binding error code happened, for a person reading the MCP client's log. */
const BINDING_ERROR_REASONS: Readonly<Record<number, string>> = {
  [McpBindingErrorCode.ServerUnavailable]: 'no component on the ACP route provides this server (it was unregistered, or never was)',
  [McpBindingErrorCode.ResourceLimitExceeded]: 'the server has too many requests in flight',
  [McpBindingErrorCode.BackendFailed]: 'the server failed without an MCP answer',
  [McpBindingErrorCode.RequestCancelled]: 'the request was cancelled on the ACP route',
  [McpBindingErrorCode.InvalidParams]: 'the ACP route refused the request as malformed or as a duplicate',
};

/**
 * The MCP error for an `mcp/message` that failed on the ACP side: the binding's code kept, a
 * message that says which server and why, and `data` with the ACP error's own message and data.
 */
export function bindingErrorResponse(id: RequestId, serverName: string, error: unknown): McpWireMessage {
  if (!(error instanceof RpcError)) {
    return mcpErrorResponse(id, -32603, `MCP server "${serverName}" over ACP: ${describeThrown(error)}`);
  }
  const reason = BINDING_ERROR_REASONS[error.code] ?? 'the ACP route answered with an error';
  const data: JsonObject = { acpError: error.message };
  if (error.data !== undefined) data.acpData = error.data as JsonValue;
  return mcpErrorResponse(id, error.code, `MCP server "${serverName}" over ACP: ${reason}`, data);
}
