/**
 * The proxy checks (`acp-wire check --proxy`), the check playing the conductor, the proxy's
 * successor and its client: `proxy/initialize`, the `proxy/successor` envelope both ways, and ids
 * given anew on each hop. The hop-by-hop checks (cancellation, MCP, exit) are in proxy-hop-checks.ts.
 *
 * @packageDocumentation
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import { PROXY_SUCCESSOR_METHOD } from '../jsonrpc/protocol';
import type { AgentProcess } from './agent-process';
import type { CheckContext } from './context';
import type { Check } from './check';
import { type CheckOutcome, fail, pass, withEvidence } from './outcome';
import { awaitLine, innerOf, isEnvelopeOf, isPlainOf, sameJson } from './proxy-lines';
import { RULES } from './rules';
import { ASK_METHOD, ECHO_METHOD, HOLD_METHOD } from './successor-peer';
import { idKey, shortText, type WireLine } from './wire-line';

const initialize: Check = {
  id: 'proxy.initialize',
  group: 'proxy',
  title: 'proxy/initialize is forwarded to the successor as initialize, and answered with a valid InitializeResponse',
  rule: RULES.proxyInitialize,
  async run(context) {
    const agent = await context.agent();
    const sent = [...agent.sent.values()].find((each) => each.method === 'proxy/initialize')!;
    const answer = sent.answers[0]!;
    const result = answer.message?.result as JsonObject;
    const version = result.protocolVersion;
    if (version !== 1 && version !== 2)
      return withEvidence(fail(`proxy/initialize was answered with protocolVersion ${JSON.stringify(version)}`), sent.line, answer);
    const errors = context.schema.errors('InitializeResponse', result, version);
    if (errors.length > 0)
      return withEvidence(fail(`${errors.length} schema error(s): ${errors.slice(0, 3).join('; ')}`, RULES.stdoutOnlyMessages), answer);
    const forwarded = agent.lines.find(isEnvelopeOf('initialize', true));
    if (!forwarded)
      return withEvidence(
        fail('proxy/initialize was answered without an initialize sent to the successor', RULES.proxyForwards),
        sent.line,
        answer,
      );
    const offered = (innerOf(forwarded)?.params as JsonObject | undefined)?.protocolVersion;
    if (offered !== context.offer)
      return withEvidence(
        fail(`the initialize sent to the successor offers ${JSON.stringify(offered)}, not the client's ${context.offer}`),
        forwarded,
      );
    return pass(`answered v${version}; initialize forwarded to the successor`);
  },
};

/** A client request and notification go to the successor in the envelope, unchanged; the successor's answer comes back as the client's. */
async function clientToSuccessor(context: CheckContext, agent: AgentProcess): Promise<CheckOutcome | undefined> {
  const from = agent.lines.length;
  const params = { token: 'acp-wire-check', nested: { list: [1, '2', null] } };
  const sent = agent.request(ECHO_METHOD, params);
  const note = agent.notify('acp-wire/check-note', params);
  const envelope = await awaitLine(context, agent, from, isEnvelopeOf(ECHO_METHOD, true));
  if (!envelope) {
    const plain = agent.lines.slice(from).find(isPlainOf(ECHO_METHOD, true));
    const what = plain ? `it came out plain, not in ${PROXY_SUCCESSOR_METHOD}` : `nothing within ${context.settings.timeoutMs} ms`;
    return withEvidence(fail(`a client request was not sent to the successor in ${PROXY_SUCCESSOR_METHOD}: ${what}`), sent.line, plain);
  }
  if (!sameJson(innerOf(envelope)?.params, params))
    return withEvidence(fail(`the request reached the successor with other params: ${shortText(envelope.text)}`), sent.line, envelope);
  const answer = await agent.answer(sent, context.settings.timeoutMs);
  const echo = (answer?.message?.result as JsonObject | undefined)?.echo;
  if (!answer || !sameJson(echo, params))
    return withEvidence(
      fail(
        `the successor's answer did not come back as the client's: ${answer ? shortText(answer.text) : 'no answer'}`,
        RULES.alwaysAnswered,
      ),
      sent.line,
      envelope,
      answer,
    );
  const wrapped = await awaitLine(
    context,
    agent,
    from,
    isEnvelopeOf('acp-wire/check-note', false, (inner) => sameJson(inner, params)),
  );
  if (!wrapped) return withEvidence(fail(`a client notification was not sent to the successor in ${PROXY_SUCCESSOR_METHOD}`), note);
  return undefined;
}

/** A notification and a request of the successor reach the client plain; the client's answer goes back in the envelope. */
async function successorToClient(context: CheckContext, agent: AgentProcess): Promise<CheckOutcome | undefined> {
  const from = agent.lines.length;
  const update = { sessionId: 'acp-wire-check', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } } };
  const note = agent.notify(PROXY_SUCCESSOR_METHOD, { method: 'session/update', params: update });
  const plainNote = await awaitLine(
    context,
    agent,
    from,
    isPlainOf('session/update', false, (params) => sameJson(params, update)),
  );
  if (!plainNote) return withEvidence(fail("a successor's notification did not reach the client (plain, unchanged)"), note);
  const question = { question: 'acp-wire-check' };
  const ask = agent.request(PROXY_SUCCESSOR_METHOD, { method: ASK_METHOD, params: question });
  const plainAsk = await awaitLine(
    context,
    agent,
    from,
    isPlainOf(ASK_METHOD, true, (params) => sameJson(params, question)),
  );
  if (!plainAsk) return withEvidence(fail("a successor's request did not reach the client (plain, unchanged)"), ask.line);
  const answer = await agent.answer(ask, context.settings.timeoutMs);
  const asked = (answer?.message?.result as JsonObject | undefined)?.asked;
  if (!answer || !sameJson(asked, question))
    return withEvidence(
      fail(`the client's answer did not go back to the successor: ${answer ? shortText(answer.text) : 'no answer'}`, RULES.alwaysAnswered),
      ask.line,
      plainAsk,
      answer,
    );
  return undefined;
}

const envelope: Check = {
  id: 'proxy.envelope',
  group: 'proxy',
  title: 'messages go to the successor in proxy/successor and come from it unwrapped, both ways, with their answers',
  rule: RULES.proxyEnvelope,
  async run(context) {
    const agent = await context.agent();
    return (await clientToSuccessor(context, agent)) ?? (await successorToClient(context, agent)) ?? pass();
  },
};

/** Client ids that a proxy must not confuse: a string and an integer beyond 2^53. */
const CLIENT_IDS = ['"acp-wire-check-a"', '9007199254740993'];

const ids: Check = {
  id: 'proxy.ids',
  group: 'proxy',
  title: "forwarded requests get ids of the proxy's own, and answers coming back in another order reach the right client request",
  rule: RULES.hopIds,
  async run(context) {
    const agent = await context.agent();
    const from = agent.lines.length;
    const sent = CLIENT_IDS.map((rawId, n) => agent.request(HOLD_METHOD, { n }, rawId));
    const envelopes: WireLine[] = [];
    for (const n of sent.keys()) {
      const line = await awaitLine(
        context,
        agent,
        from,
        isEnvelopeOf(HOLD_METHOD, true, (params) => isJsonObject(params) && params.n === n),
      );
      if (!line) return withEvidence(fail(`the request with id ${sent[n]!.rawId} was not sent to the successor`), sent[n]!.line);
      envelopes.push(line);
    }
    for (const [n, line] of [...envelopes.entries()].reverse()) agent.respond(line.rawId!, { result: { n } });
    for (const [n, request] of sent.entries()) {
      const answer = await agent.answer(request, context.settings.timeoutMs);
      const stray = agent.strays.find((line) => (line.message?.result as JsonObject | undefined)?.n === n);
      if (!answer || (answer.message?.result as JsonObject | undefined)?.n !== n) {
        const how = stray ? `came back with the id ${stray.rawId}: ${shortText(stray.text)}` : 'got no answer';
        return withEvidence(
          fail(`the request with id ${request.rawId} ${how}`, RULES.idEchoed),
          request.line,
          envelopes[n],
          stray ?? answer,
        );
      }
    }
    const reused = envelopes.find((line, n) => line.rawId !== undefined && idKey(line.rawId) === idKey(sent[n]!.rawId));
    if (reused)
      return withEvidence(
        fail(`the client's id ${reused.rawId} was sent on to the successor as it was, not as an id of the proxy's own`),
        reused,
      );
    return pass(`client ids ${CLIENT_IDS.join(', ')} became ${envelopes.map((line) => line.rawId).join(', ')}`);
  },
};

/** The proxy checks of initialization, the envelope and ids. */
export const PROXY_ENVELOPE_CHECKS: readonly Check[] = [initialize, envelope, ids];
