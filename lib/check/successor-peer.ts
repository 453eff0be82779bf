/**
 * `--proxy`: the check plays the conductor around the proxy under check, and answers what the
 * proxy sends as the two peers it reaches through the conductor would: its successor (the agent,
 * behind `proxy/successor` envelopes) and its client (plain requests toward the client).
 *
 * @packageDocumentation
 */
import { unwrapSuccessor } from '../chain/successor';
import { RpcError } from '../jsonrpc/errors';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import { isSuccessorEnvelope } from '../jsonrpc/protocol';
import type { AgentProcess } from './agent-process';

/** A request the successor answers with `{"echo": <its params>}`. */
export const ECHO_METHOD = 'acp-wire/check-echo';

/** A request the successor does not answer until the check does (to cancel it). */
export const HOLD_METHOD = 'acp-wire/check-hold';

/** A request toward the client, which the check answers with `{"asked": <its params>}`. */
export const ASK_METHOD = 'acp-wire/check-ask';

/** The MCP-over-ACP request a proxy claims (for its own servers) or passes toward the client. */
export const MCP_MESSAGE_METHOD = 'mcp/message';

/** The successor's answer to `initialize` offering `version`: an agent of version 1 or 2, as the conformance agent answers. */
function initializeResult(params: JsonValue | undefined): JsonObject {
  const offered = isJsonObject(params) ? params.protocolVersion : undefined;
  const info = { name: 'acp-wire-check-successor', version: '1' };
  if (offered === 1) return { protocolVersion: 1, agentInfo: info, agentCapabilities: {}, authMethods: [] };
  return { protocolVersion: 2, info, capabilities: { session: {} } };
}

/** What the successor answers an inner request with, or undefined to leave it unanswered. */
function successorAnswer(
  method: string,
  params: JsonValue | undefined,
  sessions: () => number,
): { result: JsonValue } | { error: JsonObject } | undefined {
  if (method === HOLD_METHOD) return undefined;
  if (method === 'initialize') return { result: initializeResult(params) };
  if (method === 'session/new') return { result: { sessionId: `acp-wire-check-session-${sessions()}` } };
  if (method === ECHO_METHOD) return { result: { echo: params ?? null } };
  return { error: RpcError.methodNotFound(method).toJSON() as unknown as JsonObject };
}

/**
 * Makes the check answer a proxy's requests as its successor and its client: an envelope request
 * gets the successor's answer (`initialize`, `session/new`, {@link ECHO_METHOD}; none for
 * {@link HOLD_METHOD}; `-32601` otherwise); a plain {@link ASK_METHOD} gets `{"asked": …}` and a
 * plain `mcp/message` an empty tool list; anything else the default answers.
 */
export function playSuccessorAndClient(agent: AgentProcess): void {
  let sessions = 0;
  agent.requestHandler = (line) => {
    const message = line.message!;
    const method = String(message.method);
    const id = line.rawId ?? JSON.stringify(message.id);
    if (isSuccessorEnvelope(method)) {
      const inner = unwrapSuccessor(message.params);
      if (!inner) {
        agent.respond(id, { error: RpcError.invalidParams('malformed proxy/successor').toJSON() as unknown as JsonObject });
        return true;
      }
      const answer = successorAnswer(inner.method, inner.params as JsonValue | undefined, () => ++sessions);
      if (answer) agent.respond(id, answer);
      return true;
    }
    if (method === ASK_METHOD) agent.respond(id, { result: { asked: (message.params as JsonValue) ?? null } });
    else if (method === MCP_MESSAGE_METHOD) agent.respond(id, { result: { result: { tools: [] } } });
    else return false;
    return true;
  };
}
