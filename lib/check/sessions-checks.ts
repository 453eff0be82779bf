/**
 * The session and turn checks: `session/new`, a turn that ends with a valid stop reason, valid
 * `session/update`s, `session/cancel` within a bound, the turn after a cancelled one, and what the
 * agent does with `$/cancel_request` on a prompt.
 *
 * @packageDocumentation
 */
import { ErrorCode } from '../jsonrpc/errors';
import { CANCEL_REQUEST_METHOD } from '../jsonrpc/protocol';
import type { CheckContext } from './context';
import { type Check, fail, notApplicable, pass } from './outcome';
import type { SentLine } from './agent-process';
import { type CheckSession, checkSession, describeEnd, isTextChunkOf, sendPrompt, stopReasonOf, turnUnderWay } from './turns';
import { errorCodeOf, shortText } from './wire-line';

const CANCELLED_KEY = 'cancelled-session';

const newSession: Check = {
  id: 'sessions.new',
  group: 'sessions',
  title: 'session/new is answered with a session valid against the official schema',
  async run(context) {
    const { agent, sessionId } = await checkSession(context);
    const version = context.versionOf(agent) ?? 1;
    const answer = context.memo.get(`session/new:${sessionId}`) as { message?: { result?: unknown } };
    const errors = context.schema.errors('NewSessionResponse', answer.message?.result, version);
    return errors.length === 0 ? pass() : fail(`${errors.length} schema error(s): ${errors.slice(0, 3).join('; ')}`);
  },
};

const turnEnds: Check = {
  id: 'sessions.turn',
  group: 'sessions',
  title: 'a prompt is answered with a valid stop reason',
  async run(context) {
    const session = await checkSession(context);
    const sent = sendPrompt(context, session, false);
    const answer = await session.agent.answer(sent, context.settings.timeoutMs);
    if (!answer) return fail(`no answer to session/prompt within ${context.settings.timeoutMs} ms`);
    if (stopReasonOf(answer) === undefined) return fail(`session/prompt was answered without a stop reason: ${describeEnd(answer)}`);
    const errors = context.schema.errors('PromptResponse', answer.message?.result, context.versionOf(session.agent) ?? 1);
    if (errors.length > 0) return fail(`${errors.length} schema error(s): ${errors.slice(0, 3).join('; ')}`);
    return pass(stopReasonOf(answer));
  },
};

const sessionCancel: Check = {
  id: 'sessions.session-cancel',
  group: 'sessions',
  title: 'session/cancel ends the turn with stopReason cancelled, in time',
  async run(context) {
    const session = await checkSession(context);
    const sent = sendPrompt(context, session, true);
    await turnUnderWay(context, session, sent);
    const start = performance.now();
    session.agent.notify('session/cancel', { sessionId: session.sessionId });
    const answer = await session.agent.answer(sent, context.settings.cancelTimeoutMs);
    if (!answer) return fail(`the prompt was not answered within ${context.settings.cancelTimeoutMs} ms of session/cancel`);
    context.memo.set(CANCELLED_KEY, session);
    const ms = Math.round(performance.now() - start);
    if (stopReasonOf(answer) === 'cancelled') return pass(`cancelled ${ms} ms after session/cancel`);
    return fail(`the prompt cancelled by session/cancel ended ${describeEnd(answer)}, not cancelled`);
  },
};

const afterCancel: Check = {
  id: 'sessions.after-cancel',
  group: 'sessions',
  title: 'the prompt after a cancelled turn gets its own answer (text, then end_turn)',
  async run(context) {
    const session = await checkSession(context);
    if (context.memo.get(CANCELLED_KEY) !== session)
      return notApplicable('no turn of this session was cancelled (sessions.session-cancel)');
    const { agent, sessionId } = session;
    const from = agent.lines.length;
    const start = performance.now();
    const sent = sendPrompt(context, session, false);
    const answer = await agent.answer(sent, context.settings.timeoutMs);
    if (!answer) return fail(`no answer to the prompt after a cancelled turn within ${context.settings.timeoutMs} ms`);
    const ms = Math.round(performance.now() - start);
    const end = agent.lines.indexOf(answer);
    const chunks = agent.lines.slice(from, end).filter((line) => isTextChunkOf(line, sessionId)).length;
    if (stopReasonOf(answer) === 'end_turn' && chunks > 0) return pass();
    await context.pause(context.settings.quietMs);
    const late = agent.lines.slice(end).filter((line) => isTextChunkOf(line, sessionId)).length;
    const lateNote = late > 0 ? `; ${late} agent_message_chunk update(s) came after its answer` : '';
    return fail(
      `the prompt after a cancelled turn ended ${describeEnd(answer)} after ${ms} ms with ${chunks} agent_message_chunk update(s)${lateNote}`,
    );
  },
};

/** Ends a turn that ignored `$/cancel_request` with `session/cancel`, for the next checks; says how it ended. */
async function endWithSessionCancel(context: CheckContext, session: CheckSession, sent: SentLine): Promise<string> {
  if (sent.answers.length > 0) return '';
  session.agent.notify('session/cancel', { sessionId: session.sessionId });
  const answer = await session.agent.answer(sent, context.settings.cancelTimeoutMs);
  return answer ? `; session/cancel then ended it ${describeEnd(answer)}` : '; session/cancel did not end it either';
}

const cancelRequest: Check = {
  id: 'sessions.cancel-request',
  group: 'sessions',
  title: '$/cancel_request of a prompt is honoured (ignored or answered wrongly fails)',
  async run(context) {
    // A session of its own: what an earlier check left behind in the shared one does not count here.
    const session = await checkSession(context, true);
    const { agent } = session;
    const sent = sendPrompt(context, session, true);
    await turnUnderWay(context, session, sent);
    const before = agent.strays.length;
    agent.notify(CANCEL_REQUEST_METHOD, { requestId: JSON.parse(sent.rawId) as number });
    const answer = await agent.answer(sent, context.settings.cancelTimeoutMs);
    const stray = agent.strays[before];
    const wrong = stray ? `answered wrongly: the notification got the answer ${shortText(stray.text)}` : undefined;
    if (!answer) {
      const then = await endWithSessionCancel(context, session, sent);
      return fail(`${wrong ? `${wrong}; and ` : ''}ignored: no answer to the prompt within ${context.settings.cancelTimeoutMs} ms${then}`);
    }
    const honoured = stopReasonOf(answer) === 'cancelled' || errorCodeOf(answer) === ErrorCode.RequestCancelled;
    if (wrong) return fail(`${wrong}${honoured ? ` (the prompt then ended ${describeEnd(answer)})` : ''}`);
    if (honoured) return pass(`honoured: the prompt ended ${describeEnd(answer)}`);
    if (stopReasonOf(answer) === undefined) return fail(`answered wrongly: the prompt ended ${describeEnd(answer)}`);
    return fail(`ignored: the turn ran on and ended ${describeEnd(answer)}`);
  },
};

const updatesValid: Check = {
  id: 'sessions.updates-valid',
  group: 'sessions',
  title: 'every session/update is valid against the official schema',
  isFinal: true,
  async run(context) {
    let count = 0;
    for (const agent of context.processes) {
      const version = context.versionOf(agent) ?? 1;
      const definition = version === 1 ? 'SessionNotification' : 'UpdateSessionNotification';
      for (const line of agent.lines) {
        if (line.message?.method !== 'session/update') continue;
        count++;
        const errors = context.schema.errors(definition, line.message.params, version);
        if (errors.length > 0) return fail(`${errors.slice(0, 2).join('; ')} in ${shortText(line.text)}`);
      }
    }
    if (count === 0)
      return context.settings.canRunTurns
        ? notApplicable('no session/update was received')
        : notApplicable('turns are not run (--no-turns)');
    return pass(`${count} updates`);
  },
};

/** The sessions group. */
export const SESSION_CHECKS: readonly Check[] = [newSession, turnEnds, sessionCancel, afterCancel, cancelRequest, updatesValid];
