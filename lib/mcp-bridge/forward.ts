/**
 * One MCP request from an agent's MCP client, sent on as an `mcp/message` toward the providers and
 * answered from its carrier: exactly one outcome per request, cancellation carried both ways.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { RpcError, describeThrown } from '../jsonrpc/errors';
import { isJsonObject, type JsonObject, type JsonValue, type RequestId } from '../jsonrpc/message';
import type { McpCaller, McpNotification } from '../mcp/caller';
import { McpBindingErrorCode, type McpOutcome } from '../mcp/protocol';
import { mcpErrorResponse, type McpHttpReply, type McpWireMessage } from './reply';
import { InputRoundFailure, MAX_INPUT_ROUNDS, askClient, inputRequiredOf, retryParams } from './input-rounds';
import { requestKey, type McpSession } from './sessions';

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
  /**
   * The request's MCP session, if any: its requests in flight (for `notifications/cancelled`) and
   * the client's answers to `input_required` rounds. A request without one (revision 2026-07-28)
   * gets an `input_required` result as it is.
   */
  readonly session: McpSession | undefined;
  /** The route's requests in flight (what a `session/cancel` of its ACP session aborts). */
  readonly inFlight: Set<AbortController>;
}

/** The JSON-RPC code an MCP client gets for a request that was cancelled. */
const REQUEST_CANCELLED = -32800;

/**
 * Forwards one MCP request and answers it once.
 *
 * @remarks
 * The `mcp/message` gets a fresh `requestId`, the same on every hop; the notifications a provider
 * tags with it as their subscription (`io.modelcontextprotocol/subscriptionId`, the messages of a
 * `subscriptions/listen`) reach the client tagged with the client's own id. When the client goes away
 * (closes the HTTP request), cancels it (`notifications/cancelled`), or the bridge cancels the
 * route's requests (a `session/cancel` of its ACP session), the `mcp/message` is
 * cancelled on this hop (`$/cancel_request` with its outer id) and a result that arrives later is
 * dropped; a client still connected gets a `-32800` answer at once. In a session, an
 * `input_required` result is carried to the client (see {@link askClient}) and the request sent
 * again with its answers, as a new `mcp/message`, up to {@link MAX_INPUT_ROUNDS} times. Resolves
 * once answered; never rejects.
 */
export async function forwardMcpRequest(forward: McpForward): Promise<void> {
  const { reply, session, inFlight, id } = forward;
  const controller = new AbortController();
  reply.onAbandoned(() => controller.abort());
  const key = requestKey(id);
  session?.active.set(key, controller);
  inFlight.add(controller);
  const cancelled = new Promise<undefined>((resolve) =>
    controller.signal.addEventListener('abort', () => resolve(undefined), { once: true }),
  );
  try {
    const response = await Promise.race([answerOf(forward, controller.signal), cancelled]);
    reply.finish(response && !controller.signal.aborted ? response : mcpErrorResponse(id, REQUEST_CANCELLED, 'Request cancelled'));
  } finally {
    if (session?.active.get(key) === controller) session.active.delete(key);
    inFlight.delete(controller);
  }
}

/** The final answer of a forwarded request, after its `input_required` rounds. Never rejects. */
async function answerOf(forward: McpForward, signal: AbortSignal): Promise<McpWireMessage> {
  const { id, session, serverName } = forward;
  let params = forward.params;
  try {
    for (let round = 0; ; round++) {
      const outcome = await send(forward, params, signal);
      // A request without a session is of revision 2026-07-28: its client does the rounds itself.
      const input = 'result' in outcome ? inputRequiredOf(outcome.result) : undefined;
      if (!input || !session) return responseOf(id, outcome);
      if (round === MAX_INPUT_ROUNDS) {
        throw new InputRoundFailure(`the server still asked for input after ${MAX_INPUT_ROUNDS} rounds`, { rounds: MAX_INPUT_ROUNDS });
      }
      const answers = await askClient(input, { reply: forward.reply, session }, signal);
      params = retryParams(forward.params, input, answers);
    }
  } catch (error) {
    if (!(error instanceof InputRoundFailure)) return bindingErrorResponse(id, serverName, error);
    return mcpErrorResponse(id, -32603, `MCP server "${serverName}" over ACP: ${error.message}`, error.data);
  }
}

/** One `mcp/message` for the request, its notifications sent on the reply while it runs. */
function send(forward: McpForward, params: JsonObject | undefined, signal: AbortSignal): Promise<McpOutcome> {
  const requestId = `mcp-bridge:${randomUUID()}`;
  return forward.caller.request(forward.serverId, forward.method, params, {
    requestId,
    signal,
    onNotification: (notification) => {
      if (!signal.aborted) forward.reply.notify(notificationMessage(notification, requestId, forward.id));
    },
  });
}

/** The `_meta` key that names the `subscriptions/listen` request a message belongs to (revision 2026-07-28). */
const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';

/**
 * A notification of the forwarded request, for the client. The provider tags a subscription's
 * messages with the id it saw (the `mcp/message`'s `requestId`); the client knows its own request's
 * id only, so that tag is renamed to it.
 */
function notificationMessage(notification: McpNotification, sentId: string, clientId: RequestId): McpWireMessage {
  const message: McpWireMessage = { jsonrpc: '2.0', method: notification.method };
  const params = notification.params;
  if (params === undefined) return message;
  const meta = params._meta;
  const isTagged = isJsonObject(meta) && meta[SUBSCRIPTION_ID_META] === sentId;
  message.params = isTagged ? { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_META]: clientId } } : params;
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
