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
import { RULES } from './rules';
import type { Check } from './check';
import { fail, info, notApplicable, pass, withEvidence } from './outcome';
import type { SentLine } from './agent-process';
import { type CheckSession, checkSession, describeEnd, type FinishedTurn, runTurn, sendPrompt, stopReasonOf, turnUnderWay } from './turns';
import { ECHO_MARKER } from './fake-models/host';
import { errorCodeOf, shortText } from './wire-line';

const CANCELLED_KEY = 'cancelled-session';

const newSession: Check = {
  id: 'sessions.new',
  group: 'sessions',
  title: 'session/new is answered with a session valid against the official schema',
  rule: RULES.stdoutOnlyMessages,
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
  rule: RULES.stdoutOnlyMessages,
  async run(context) {
    const session = await checkSession(context);
    const sent = sendPrompt(context, session, false);
    const answer = await session.agent.answer(sent, context.settings.timeoutMs);
    if (!answer) return fail(`no answer to session/prompt within ${context.settings.timeoutMs} ms`, RULES.alwaysAnswered);
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
  rule: RULES.cancelledStopReason,
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

/** The words the two prompts after a cancelled turn ask for: an agent one turn behind answers the second with the first's. */
const FOLLOW_UP_WORDS = ['apricot', 'blueberry'] as const;

/** A prompt after the cancelled turn, asking for `word` (`[echo]`: the fake models echo it, as the conformance agent does). */
const followUpText = (word: string): string => `Reply with the single word ${word}. ${ECHO_MARKER}`;

/** What a follow-up turn did, for a message: how it ended, when, with what text. */
function describeTurn(turn: FinishedTurn): string {
  const text = turn.text === '' ? 'no text' : `the text ${JSON.stringify(shortText(turn.text, 160))}`;
  return `ended ${turn.answer ? describeEnd(turn.answer) : 'without an answer'} after ${turn.ms} ms with ${text}`;
}

const afterCancel: Check = {
  id: 'sessions.after-cancel',
  group: 'sessions',
  title: 'the two prompts after a cancelled turn each get their own answer (their own text, then end_turn)',
  rule: RULES.turnIsItsOwn,
  async run(context) {
    const session = await checkSession(context);
    if (context.memo.get(CANCELLED_KEY) !== session)
      return notApplicable('no turn of this session was cancelled (sessions.session-cancel)');
    const [firstWord, secondWord] = FOLLOW_UP_WORDS;
    const first = await runTurn(context, session, followUpText(firstWord));
    if (!first.answer)
      return fail(`no answer to the prompt after a cancelled turn within ${context.settings.timeoutMs} ms`, RULES.alwaysAnswered);
    const second = await runTurn(context, session, followUpText(secondWord));
    if (!second.answer)
      return fail(`no answer to the second prompt after a cancelled turn within ${context.settings.timeoutMs} ms`, RULES.alwaysAnswered);
    const isOwn = (turn: FinishedTurn): boolean => turn.text !== '' && stopReasonOf(turn.answer!) === 'end_turn';
    const isBehind = second.text.includes(firstWord);
    if (isOwn(first) && isOwn(second) && !isBehind) return pass();
    const lag = isBehind ? ` (one turn behind: the second's text holds the first's ${firstWord})` : '';
    return fail(
      `the first prompt after a cancelled turn (asking for ${firstWord}) ${describeTurn(first)}; the second (${secondWord}) ${describeTurn(second)}${lag}`,
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
  title: '$/cancel_request of a prompt is honoured, or ignored (allowed: info), and never answered itself',
  rule: RULES.cancelRequestOptional,
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
    const wrong = stray ? `the notification got the answer ${shortText(stray.text)}` : undefined;
    if (!answer) {
      const ignored = `ignored: no answer to the prompt within ${context.settings.cancelTimeoutMs} ms${await endWithSessionCancel(context, session, sent)}`;
      return wrong ? fail(`${wrong}; and ${ignored}`, RULES.notificationsUnanswered) : info(ignored);
    }
    const honoured = stopReasonOf(answer) === 'cancelled' || errorCodeOf(answer) === ErrorCode.RequestCancelled;
    if (wrong) return fail(`${wrong} (the prompt then ended ${describeEnd(answer)})`, RULES.notificationsUnanswered);
    if (honoured) return pass(`honoured: the prompt ended ${describeEnd(answer)}`);
    if (stopReasonOf(answer) === undefined) return fail(`the prompt ended ${describeEnd(answer)}: neither its own answer nor -32800`);
    return info(`ignored: the turn ran on and ended ${describeEnd(answer)}`);
  },
};

const updatesValid: Check = {
  id: 'sessions.updates-valid',
  group: 'sessions',
  title: 'every session/update is valid against the official schema',
  rule: RULES.stdoutOnlyMessages,
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
        if (errors.length > 0) return withEvidence(fail(`${errors.slice(0, 2).join('; ')} in ${shortText(line.text)}`), line);
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
