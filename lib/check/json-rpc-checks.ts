/**
 * The JSON-RPC checks: ids echoed exactly, one answer per request, never an answer to a
 * notification, unknown methods -32601, unknown notifications (`$/…` too) ignored.
 *
 * @packageDocumentation
 */
import { ErrorCode } from '../jsonrpc/errors';
import { CANCEL_REQUEST_METHOD } from '../jsonrpc/protocol';
import type { AgentProcess } from './agent-process';
import { RULES } from './rules';
import { type CheckContext, stateOf, UNKNOWN_METHOD } from './context';
import type { Check } from './check';
import { type CheckOutcome, fail, pass, withEvidence } from './outcome';
import { errorCodeOf, idKey, shortText } from './wire-line';

/**
 * Ids the ACP schema allows (a string, or an integer within int64) whose echo a careless peer gets
 * wrong: an integer beyond 2^53 (a double rounds it), a negative number, zero, and a string with
 * an escaped quote.
 */
const TRICKY_IDS = ['9007199254740993', '-1', '0', '"id \\"quoted\\""'];

/** Sends one request with the id `rawId` and compares the id of the first answer that comes back: a failure, or undefined. */
async function echoes(context: CheckContext, agent: AgentProcess, rawId: string): Promise<CheckOutcome | undefined> {
  const sent = agent.request(UNKNOWN_METHOD, undefined, rawId);
  const answer = await agent.nextLine((line) => sent.answers.includes(line) || agent.strays.includes(line), context.settings.timeoutMs);
  if (!answer)
    return withEvidence(
      fail(`no answer within ${context.settings.timeoutMs} ms to the request with id ${rawId}${stateOf(agent)}`),
      sent.line,
    );
  if (sent.answers.includes(answer)) return undefined;
  return withEvidence(fail(`the id ${rawId} came back as ${answer.rawId ?? '(none)'}: ${shortText(answer.text)}`), sent.line, answer);
}

const idEcho: Check = {
  id: 'json-rpc.id-echo',
  group: 'json-rpc',
  title: 'ids are echoed exactly (2^53 + 1, -1, 0, a string with a quote)',
  rule: RULES.idEchoed,
  async run(context) {
    const agent = await context.agent();
    const problems: CheckOutcome[] = [];
    for (const rawId of TRICKY_IDS) {
      const problem = await echoes(context, agent, rawId);
      if (problem) problems.push(problem);
      if (agent.isOutputEnded) break;
    }
    if (problems.length === 0) return pass();
    const message = problems.map((problem) => problem.message).join('; ');
    return withEvidence(fail(message), ...problems.flatMap((problem) => problem.evidence ?? []));
  },
};

const unknownMethod: Check = {
  id: 'json-rpc.unknown-method',
  group: 'json-rpc',
  title: 'a request of an unknown method is answered -32601',
  rule: RULES.methodNotFound,
  async run(context) {
    const agent = await context.agent();
    const answer = await context.expectAnswer(agent, UNKNOWN_METHOD, { why: 'acp-wire check' });
    const code = errorCodeOf(answer);
    if (code === ErrorCode.MethodNotFound) return pass();
    const problem = fail(
      `${UNKNOWN_METHOD} was answered ${code === undefined ? 'without an error' : `with ${code}`}: ${shortText(answer.text)}`,
    );
    return withEvidence(problem, agent.sent.get(idKey(answer.rawId ?? ''))?.line, answer);
  },
};

/**
 * Sends notifications, then a request; fails on any answer that answers no request (an answer to
 * a notification, or one without an id) seen until a quiet period after the request's answer.
 */
async function unanswered(context: CheckContext, notifications: readonly [string, object | undefined][]): Promise<CheckOutcome> {
  const agent = await context.agent();
  const before = agent.strays.length;
  const sent = notifications.map(([method, params]) => agent.notify(method, params as never));
  await context.expectServing(agent, `the notifications ${notifications.map(([method]) => method).join(', ')}`);
  await context.pause(context.settings.quietMs);
  const strays = agent.strays.slice(before);
  if (strays.length === 0) return pass();
  return withEvidence(fail(`a notification was answered: ${shortText(strays[0]!.text)}`), ...sent, ...strays);
}

const unknownNotification: Check = {
  id: 'json-rpc.unknown-notification',
  group: 'json-rpc',
  title: 'unknown notifications are ignored: no answer, the agent still serves',
  rule: RULES.notificationsUnanswered,
  run: (context) =>
    unanswered(context, [
      ['acp-wire/check-unknown-notification', { why: 'acp-wire check' }],
      ['_acp-wire/check-unknown-notification', undefined],
    ]),
};

const dollarNotification: Check = {
  id: 'json-rpc.dollar-notification',
  group: 'json-rpc',
  title: '`$/` notifications (`$/cancel_request` of an unknown id too) are never answered',
  rule: RULES.notificationsUnanswered,
  run: (context) =>
    unanswered(context, [
      ['$/acp-wire-check-unknown', undefined],
      [CANCEL_REQUEST_METHOD, { requestId: 'acp-wire-check-no-such-request' }],
    ]),
};

const oneAnswer: Check = {
  id: 'json-rpc.one-answer',
  group: 'json-rpc',
  title: 'no request is answered twice',
  rule: RULES.oneResponse,
  isFinal: true,
  async run(context) {
    for (const agent of context.processes) {
      for (const sent of agent.sent.values()) {
        if (sent.answers.length > 1) {
          const message = `${sent.method} (id ${sent.rawId}) was answered ${sent.answers.length} times; the second: ${shortText(sent.answers[1]!.text)}`;
          return withEvidence(fail(message), sent.line, ...sent.answers);
        }
      }
    }
    return pass();
  },
};

/** The JSON-RPC group. */
export const JSON_RPC_CHECKS: readonly Check[] = [idEcho, unknownMethod, unknownNotification, dollarNotification, oneAnswer];
