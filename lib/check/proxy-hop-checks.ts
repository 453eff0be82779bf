/**
 * The proxy checks of what is per hop: `$/cancel_request` re-issued with the next hop's id (never
 * tunnelled), `mcp/message` claimed for the proxy's own MCP servers and forwarded for the others,
 * and a clean exit.
 *
 * @packageDocumentation
 */
import { RpcError } from '../jsonrpc/errors';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import { CANCEL_REQUEST_METHOD, PROXY_SUCCESSOR_METHOD } from '../jsonrpc/protocol';
import type { AgentProcess } from './agent-process';
import type { CheckContext } from './context';
import type { Check } from './check';
import { type CheckOutcome, fail, pass, withEvidence } from './outcome';
import { exitsWithin, groupMembers } from './process-end';
import { awaitLine, innerOf, isEnvelopeOf, isPlainOf } from './proxy-lines';
import { RULES } from './rules';
import { HOLD_METHOD, MCP_MESSAGE_METHOD } from './successor-peer';
import { shortText, type WireLine } from './wire-line';

/** The id a `$/cancel_request` line names (plain or wrapped), and whether it was wrapped. */
function cancelOf(line: WireLine): { requestId: JsonValue; isWrapped: boolean } | undefined {
  const inner = innerOf(line);
  const message = inner ?? (line.message && { method: line.message.method, params: line.message.params as JsonValue | undefined });
  if (message?.method !== CANCEL_REQUEST_METHOD || !isJsonObject(message.params)) return undefined;
  return { requestId: message.params.requestId as JsonValue, isWrapped: inner !== undefined };
}

/** The verdict on the cancel the proxy sent on (if any), for a client request `clientId` forwarded as `envelopeId`. */
function cancelVerdict(cancel: WireLine | undefined, clientId: JsonValue, envelopeId: JsonValue, ms: number): CheckOutcome {
  if (!cancel) return fail(`the client's $/cancel_request was not re-issued toward the successor within ${ms} ms`);
  const { requestId, isWrapped } = cancelOf(cancel)!;
  if (requestId !== envelopeId)
    return fail(
      `the client's $/cancel_request was tunnelled${isWrapped ? ` in ${PROXY_SUCCESSOR_METHOD}` : ''} with the client's id ${JSON.stringify(clientId)}, not re-issued with the id of the forwarded request (${JSON.stringify(envelopeId)})`,
    );
  return pass(
    `re-issued${isWrapped ? ` inside ${PROXY_SUCCESSOR_METHOD} (receivers accept it; the plain form is the current one)` : ''} for ${JSON.stringify(envelopeId)}`,
  );
}

const cancelRequest: Check = {
  id: 'proxy.cancel-request',
  group: 'proxy',
  title: "$/cancel_request is re-issued toward the successor with the forwarded request's id, never tunnelled",
  rule: RULES.cancelHopByHop,
  async run(context) {
    const agent = await context.agent();
    const from = agent.lines.length;
    // An id of a kind the proxy does not give: a cancel that names it was not re-issued for the next hop.
    const sent = agent.request(HOLD_METHOD, { n: 'cancel' }, '"acp-wire-check-cancel"');
    const envelope = await awaitLine(context, agent, from, isEnvelopeOf(HOLD_METHOD, true));
    if (!envelope) return withEvidence(fail('the request to cancel was not sent to the successor', RULES.proxyEnvelope), sent.line);
    const clientId = JSON.parse(sent.rawId) as JsonValue;
    const envelopeId = envelope.message!.id as JsonValue;
    const envelopeRawId = envelope.rawId!;
    const after = agent.lines.length;
    const notice = agent.notify(CANCEL_REQUEST_METHOD, { requestId: clientId });
    const cancel = await agent.lineAfter(after, (line) => cancelOf(line) !== undefined, context.settings.cancelTimeoutMs);
    const verdict = cancelVerdict(cancel, clientId, envelopeId, context.settings.cancelTimeoutMs);
    agent.respond(envelopeRawId, { error: RpcError.requestCancelled().toJSON() as unknown as JsonObject });
    const answer = await agent.answer(sent, context.settings.timeoutMs);
    if (!answer)
      return withEvidence(fail('the cancelled request was never answered', RULES.alwaysAnswered), sent.line, envelope, notice, cancel);
    return withEvidence(verdict, sent.line, envelope, notice, cancel, answer);
  },
};

/** An MCP request as the agent's side sends it (the inner MCP revision's metadata included). */
function mcpRequest(serverId: string, requestId: string): JsonObject {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  return { serverId, requestId, method: 'tools/list', params: { _meta: meta } };
}

/** Sends an `mcp/message` from the successor; returns its answer, and the plain `mcp/message` the proxy sent toward the client for it (if it did). */
async function mcpFromSuccessor(
  context: CheckContext,
  agent: AgentProcess,
  serverId: string,
): Promise<{ sent?: WireLine; answer?: WireLine; upstream?: WireLine }> {
  const from = agent.lines.length;
  const request = agent.request(PROXY_SUCCESSOR_METHOD, {
    method: MCP_MESSAGE_METHOD,
    params: mcpRequest(serverId, `acp-wire-check-${from}`),
  });
  const answer = await agent.answer(request, context.settings.timeoutMs);
  const upstream = agent.lines
    .slice(from)
    .find(isPlainOf(MCP_MESSAGE_METHOD, true, (params) => isJsonObject(params) && params.serverId === serverId));
  return { sent: request.line, answer, upstream };
}

/** The `acp` MCP servers the proxy added to a `session/new` on its way to the successor. */
async function serversAdded(context: CheckContext, agent: AgentProcess): Promise<string[]> {
  const from = agent.lines.length;
  const sent = agent.request('session/new', { cwd: context.settings.sessionCwd, mcpServers: [] });
  const forwarded = await awaitLine(context, agent, from, isEnvelopeOf('session/new', true));
  await agent.answer(sent, context.settings.timeoutMs);
  if (!forwarded) return [];
  const servers = (innerOf(forwarded)?.params as JsonObject | undefined)?.mcpServers;
  if (!Array.isArray(servers)) return [];
  return servers.flatMap((server) =>
    isJsonObject(server) && server.type === 'acp' && typeof server.serverId === 'string' ? [server.serverId] : [],
  );
}

const mcpMessage: Check = {
  id: 'proxy.mcp-message',
  group: 'proxy',
  title: 'mcp/message is answered for the MCP servers the proxy provides, and forwarded toward the client for the others',
  rule: RULES.proxyMcp,
  async run(context) {
    const agent = await context.agent();
    const other = await mcpFromSuccessor(context, agent, 'acp-wire-check-unknown-server');
    if (!other.upstream) {
      const how = other.answer ? `it answered it itself: ${shortText(other.answer.text)}` : 'and it got no answer';
      return withEvidence(
        fail(`an mcp/message for a server the proxy does not provide was not forwarded toward the client; ${how}`, RULES.proxyForwards),
        other.sent,
        other.answer,
      );
    }
    if (!other.answer)
      return withEvidence(fail('the forwarded mcp/message was never answered', RULES.alwaysAnswered), other.sent, other.upstream);
    const own = await serversAdded(context, agent);
    for (const serverId of own) {
      const claimed = await mcpFromSuccessor(context, agent, serverId);
      if (claimed.upstream)
        return withEvidence(
          fail(`the mcp/message for its own server ${serverId} was forwarded toward the client, not answered`),
          claimed.sent,
          claimed.upstream,
        );
      if (!claimed.answer)
        return withEvidence(fail(`the mcp/message for its own server ${serverId} got no answer`, RULES.alwaysAnswered), claimed.sent);
    }
    return pass(`forwarded another server's; ${own.length === 0 ? 'it provides no MCP server' : `answered its own ${own.join(', ')}`}`);
  },
};

const cleanExit: Check = {
  id: 'proxy.clean-exit',
  group: 'proxy',
  title: 'the proxy exits with code 0 when its stdin ends, and nothing of its process group runs on',
  rule: RULES.exitAtStdinEnd,
  async run(context) {
    const proxy = context.spawn();
    await context.initialize(proxy, context.offer);
    proxy.endInput();
    const { exitTimeoutMs } = context.settings;
    if (!(await exitsWithin(proxy, exitTimeoutMs))) return fail(`still running ${exitTimeoutMs} ms after its stdin ended`);
    const exit = proxy.exit!;
    if (exit.code !== 0) return fail(`it exited ${exit.signal ?? `with code ${exit.code}`} when its stdin ended`);
    const group = proxy.tree.group;
    if (group && !(await group.waitUntilEmpty(exitTimeoutMs)))
      return fail(
        `${exitTimeoutMs} ms after it exited, its group still runs ${groupMembers(group.pgid).join(', ') || 'processes'}`,
        RULES.nothingLeftBehind,
      );
    return pass('exited with code 0');
  },
};

/** The proxy checks of cancellation, MCP-over-ACP and exit. */
export const PROXY_HOP_CHECKS: readonly Check[] = [cancelRequest, mcpMessage, cleanExit];
