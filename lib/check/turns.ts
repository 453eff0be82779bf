/**
 * Turns as the session checks drive them: the check's session, short and long prompts, the
 * updates of a turn, its stop reason.
 *
 * @packageDocumentation
 */
import { isJsonObject, type JsonObject } from '../jsonrpc/message';
import { type AgentProcess, paramsOf, type SentLine } from './agent-process';
import { type CheckContext, stateOf } from './context';
// A prompt holding it makes the fake model servers of `--model-stub` hold the turn open after its first word.
import { HOLD_MARKER } from './fake-models/host';
import { CheckFailure, fail, notApplicable } from './outcome';
import { shortText, type WireLine } from './wire-line';

/** The session the checks of a group share, on the group's agent. */
export interface CheckSession {
  readonly agent: AgentProcess;
  readonly sessionId: string;
}

const SESSION_KEY = 'session';

/**
 * The group's session: opened with `session/new` on the group's agent (again if that agent died);
 * `isFresh`: a new session of its own (on the same agent), which later checks then share.
 *
 * @throws CheckFailure (`n/a` without turns, `fail` when `session/new` is not answered with a session id)
 */
export async function checkSession(context: CheckContext, isFresh = false): Promise<CheckSession> {
  context.requireTurns();
  const agent = await context.agent();
  const known = context.memo.get(SESSION_KEY) as CheckSession | undefined;
  if (known?.agent === agent && !isFresh) return known;
  const version = context.versionOf(agent);
  if (version !== 1)
    throw new CheckFailure(notApplicable(`the turn checks speak ACP v1; the agent answered an offer of 1 with ${String(version)}`));
  const answer = await context.expectAnswer(agent, 'session/new', { cwd: context.settings.sessionCwd, mcpServers: [] });
  const result = answer.message?.result;
  const sessionId = isJsonObject(result) ? result.sessionId : undefined;
  if (typeof sessionId !== 'string')
    throw new CheckFailure(fail(`session/new was not answered with a sessionId: ${shortText(answer.text)}`));
  const session = { agent, sessionId };
  context.memo.set(SESSION_KEY, session);
  context.memo.set(`session/new:${sessionId}`, answer);
  return session;
}

/**
 * Sends a prompt: `long` asks for a turn that lasts until cancelled (or twice the cancel bound);
 * `text` replaces the short prompt's text.
 */
export function sendPrompt(context: CheckContext, session: CheckSession, long: boolean, text = 'Say hello.'): SentLine {
  if (long) text = `Count slowly from one to twenty, one number per line. ${HOLD_MARKER}`;
  const params: JsonObject = { sessionId: session.sessionId, prompt: [{ type: 'text', text }] };
  // The conformance agent's own knob (docs/conformance-peers.md): spread its reply over this time.
  if (long) params._meta = { workMs: 2 * context.settings.cancelTimeoutMs };
  return session.agent.request('session/prompt', params);
}

/** A turn run to its end: the prompt's answer (none within the timeout), the text streamed before it, how long it took. */
export interface FinishedTurn {
  readonly answer: WireLine | undefined;
  /** The text of the session's `agent_message_chunk` updates from the prompt to its answer. */
  readonly text: string;
  readonly ms: number;
}

/** Sends a short prompt of `text` and waits (up to the timeout) for its answer. */
export async function runTurn(context: CheckContext, session: CheckSession, text: string): Promise<FinishedTurn> {
  const { agent, sessionId } = session;
  const from = agent.lines.length;
  const start = performance.now();
  const answer = await agent.answer(sendPrompt(context, session, false, text), context.settings.timeoutMs);
  const ms = Math.round(performance.now() - start);
  const end = answer ? agent.lines.indexOf(answer) : agent.lines.length;
  return { answer, text: textOf(agent.lines.slice(from, end), sessionId), ms };
}

/** The text of the `agent_message_chunk` updates of `sessionId` among `lines`, joined. */
export function textOf(lines: readonly WireLine[], sessionId: string): string {
  return lines
    .filter((line) => isTextChunkOf(line, sessionId))
    .map((line) => {
      const content = (paramsOf(line).update as JsonObject).content;
      return isJsonObject(content) && typeof content.text === 'string' ? content.text : '';
    })
    .join('');
}

/** Whether a line is a `session/update` of `sessionId`. */
export function isUpdateOf(line: WireLine, sessionId: string): boolean {
  return line.message?.method === 'session/update' && paramsOf(line).sessionId === sessionId;
}

/** Whether a line is a `session/update` of `sessionId` carrying text (`agent_message_chunk`). */
export function isTextChunkOf(line: WireLine, sessionId: string): boolean {
  if (!isUpdateOf(line, sessionId)) return false;
  const update = paramsOf(line).update;
  return isJsonObject(update) && update.sessionUpdate === 'agent_message_chunk';
}

/**
 * The updates a turn produces: what the agent says, thinks, plans and runs. A session's own notices
 * (`available_commands_update`, `current_mode_update`, `usage_update`, …) come at any time, a
 * prompt's turn under way or not.
 */
const TURN_OUTPUT: ReadonlySet<unknown> = new Set(['agent_message_chunk', 'agent_thought_chunk', 'plan', 'tool_call', 'tool_call_update']);

/** Whether a line is a `session/update` of `sessionId` that a turn produces ({@link TURN_OUTPUT}). */
export function isTurnOutputOf(line: WireLine, sessionId: string): boolean {
  if (!isUpdateOf(line, sessionId)) return false;
  const update = paramsOf(line).update;
  return isJsonObject(update) && TURN_OUTPUT.has(update.sessionUpdate);
}

/**
 * Waits until a long turn is under way (its first output: a session's own notices do not count),
 * or its answer.
 *
 * @throws CheckFailure (`n/a`) when the turn ended before anything could be cancelled, (`fail`) when nothing came
 */
export async function turnUnderWay(context: CheckContext, session: CheckSession, sent: SentLine): Promise<void> {
  const { agent, sessionId } = session;
  const first = await agent.nextLine((line) => isTurnOutputOf(line, sessionId) || sent.answers.includes(line), context.settings.timeoutMs);
  if (sent.answers.length > 0) {
    throw new CheckFailure(notApplicable(`the turn ended (${describeEnd(sent.answers[0]!)}) before it could be cancelled`));
  }
  if (!first) throw new CheckFailure(fail(`no output of the turn within ${context.settings.timeoutMs} ms of a prompt${stateOf(agent)}`));
}

/** The `stopReason` of a prompt's answer, or `undefined` (an error, or no reason). */
export function stopReasonOf(answer: WireLine): string | undefined {
  const result = answer.message?.result;
  return isJsonObject(result) && typeof result.stopReason === 'string' ? result.stopReason : undefined;
}

/** How a prompt's answer ended it, for a message: `end_turn`, or `error -32603 "…"`. */
export function describeEnd(answer: WireLine): string {
  const stopReason = stopReasonOf(answer);
  if (stopReason !== undefined) return stopReason;
  const error = answer.message?.error;
  if (isJsonObject(error)) return `error ${String(error.code)} ${JSON.stringify(error.message)}`;
  return shortText(answer.text);
}
