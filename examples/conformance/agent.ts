/**
 * The conformance agent's ACP side, on {@link AcpAgent}: `initialize` (v1 or v2, chosen by
 * negotiation), the session baseline (`session/new`, `list`, `resume`, `close`, v1 `load`),
 * `session/prompt` turns and `session/cancel`.
 *
 * @packageDocumentation
 */
import {
  AcpAgent,
  ErrorCode,
  MemorySessionStore,
  RpcError,
  selectProtocolVersion,
  type AgentContext,
  type AgentInitializeAnswer,
  type AgentInitializeRequest,
  type AgentPromptRequest,
  type AgentTurn,
  type Connection,
  type ContentBlock,
  type JsonObject,
  type SessionStore,
} from '../../lib';
import { handleTestMethods, isObject, milliseconds, record, type Received } from './test-methods';
import { Timers } from './timers';

/** The `info.name` the agent answers `initialize` with. */
export const CONFORMANCE_AGENT_NAME = 'acp-wire-conformance-agent';

/**
 * The sessions made in this process, by any connection: what `session/list` reports and
 * `session/load` (v1) and `session/resume` re-attach, as an agent with shared session storage
 * would. It forgets nothing on request: the agent serves no `session/delete`, and its v2
 * capabilities stay `{"session":{}}`.
 */
const processSessions = new MemorySessionStore({ maxSessions: 10_000 });
const sessions: SessionStore = {
  create: (session) => processSessions.create(session),
  get: (sessionId) => processSessions.get(sessionId),
  update: (sessionId, changes) => processSessions.update(sessionId, changes),
  list: (query) => processSessions.list(query),
  append: (sessionId, message) => processSessions.append(sessionId, message),
  history: (sessionId) => processSessions.history(sessionId),
};

/** How long each word of a long answer takes, in ms: "at least 2000 words" is a turn of 10 s. */
const WORD_MS = 5;
/** The most words a prompt can ask for (a turn of at most 10 minutes). */
const MAX_WORDS = 120_000;

/** Options of {@link serveConformanceAgent}. */
export interface ConformanceAgentOptions {
  /** The `info.version` answered to `initialize`. */
  version: string;
}

/**
 * Serves the conformance agent's methods on `connection`, with its own state (initialize gate,
 * sessions, received notifications); everything stops when the connection closes.
 */
export function serveConformanceAgent(connection: Connection, options: ConformanceAgentOptions): AcpAgent {
  const timers = new Timers();
  const received: Received = [];
  connection.once('close', () => timers.clearAll());
  const agent = new AcpAgent(connection, {
    info: { name: CONFORMANCE_AGENT_NAME, version: options.version },
    negotiate: (params, supported) => selectProtocolVersion(checkedVersion(params.protocolVersion), supported),
    sessions,
    initialize: (request, context) => initialize(request, context, timers),
    admitPrompt: (request, context) => admitPrompt(request, context, timers),
    prompt: (turn) => runTurn(turn, timers),
    onCancelSession: (params) =>
      record(received, params === undefined ? { method: 'session/cancel' } : { method: 'session/cancel', params: params as JsonObject }),
  });
  handleTestMethods(connection, timers, received);
  return agent;
}

/** The conformance agent's own rule: a version below 1 is invalid params, not unsupported. */
function checkedVersion(requested: unknown): number {
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 1 || requested > 0xffff) {
    throw RpcError.invalidParams('`protocolVersion` must be an integer from 1 to 65535');
  }
  return requested;
}

function initialize(
  request: AgentInitializeRequest,
  { version, signal }: AgentContext,
  timers: Timers,
): AgentInitializeAnswer | undefined | Promise<AgentInitializeAnswer> {
  const meta = isObject(request.params._meta) ? request.params._meta : {};
  // Its own list: the session baseline (v2), `session/load` (v1).
  const answer: AgentInitializeAnswer = { capabilities: version === 1 ? { loadSession: true } : { session: {} } };
  switch (meta.test) {
    case 'drop':
      return undefined;
    case 'error':
      throw new RpcError(ErrorCode.InternalError, 'Internal error', 'initialize failed on request');
    case 'slow':
      return timers.delay(milliseconds(meta, 'ms'), signal).then((outcome) => {
        if (outcome === 'cancelled') throw RpcError.requestCancelled();
        return answer;
      });
    default:
      return answer;
  }
}

/**
 * Checks `_meta.insertDelayMs` and `_meta.workMs`, then holds the prompt `insertDelayMs` (without
 * a delay it returns at once, so the prompt is inserted before the next line is read).
 */
function admitPrompt(request: AgentPromptRequest, { signal }: AgentContext, timers: Timers): Promise<unknown> | undefined {
  const meta = isObject(request.params._meta) ? request.params._meta : {};
  const insertDelayMs = milliseconds(meta, 'insertDelayMs', 0);
  milliseconds(meta, 'workMs', 0);
  return insertDelayMs > 0 ? timers.delay(insertDelayMs, signal) : undefined;
}

/**
 * Streams "echo: " and the prompt's text, one word per chunk, spread over `_meta.workMs`; a prompt
 * whose text asks for "at least N words" then gets N more words, {@link WORD_MS} each.
 */
async function runTurn(turn: AgentTurn, timers: Timers): Promise<'end_turn' | 'cancelled'> {
  const meta = isObject(turn.params._meta) ? turn.params._meta : {};
  const chunks = replyChunks(turn.prompt);
  const step = milliseconds(meta, 'workMs', 0) / chunks.length;
  for (const text of chunks) {
    if (turn.signal.aborted) return 'cancelled';
    turn.sendText(text);
    if (step > 0 && (await timers.delay(step, turn.signal)) === 'cancelled') return 'cancelled';
  }
  return writeWords(turn, wordsAskedFor(turn.prompt), timers);
}

/** Writes `count` words, one chunk each, {@link WORD_MS} apart; stops at a cancel. */
async function writeWords(turn: AgentTurn, count: number, timers: Timers): Promise<'end_turn' | 'cancelled'> {
  for (let word = 1; word <= count; word++) {
    if (turn.signal.aborted || (await timers.delay(WORD_MS, turn.signal)) === 'cancelled') return 'cancelled';
    turn.sendText(` word${word}`);
  }
  return 'end_turn';
}

/** The N of "at least N words" in the prompt's text (case and spacing free), else 0. */
function wordsAskedFor(prompt: readonly ContentBlock[]): number {
  const match = /\bat\s+least\s+(\d+)\s+words\b/i.exec(promptText(prompt));
  return match ? Math.min(Number(match[1]), MAX_WORDS) : 0;
}

/** The agent's reply to a prompt, as chunks: "echo: " and its text, one word per chunk. */
function replyChunks(prompt: readonly ContentBlock[]): string[] {
  return `echo: ${promptText(prompt)}`.match(/\S+\s*/g) ?? ['echo:'];
}

/** The text blocks of a prompt, joined by spaces. */
function promptText(prompt: readonly ContentBlock[]): string {
  return prompt
    .filter(
      (block): block is Extract<ContentBlock, { type: 'text' }> =>
        isObject(block) && block.type === 'text' && typeof block.text === 'string',
    )
    .map((block) => block.text)
    .join(' ');
}
