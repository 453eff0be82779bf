/**
 * The conformance agent's ACP side, on {@link AcpAgent}: `initialize` (v1 or v2, chosen by
 * negotiation), `session/new`, `session/prompt` turns and `session/cancel`.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import {
  AcpAgent,
  ErrorCode,
  RpcError,
  selectProtocolVersion,
  type AgentAttachSessionRequest,
  type AgentContext,
  type AgentInitializeAnswer,
  type AgentInitializeRequest,
  type AgentPromptRequest,
  type AgentTurn,
  type Connection,
  type ContentBlock,
  type JsonObject,
} from '../../lib';
import { handleTestMethods, isObject, milliseconds, record, type Received } from './test-methods';
import { Timers } from './timers';

/** The `info.name` the agent answers `initialize` with. */
export const CONFORMANCE_AGENT_NAME = 'acp-wire-conformance-agent';

/**
 * The sessions made in this process, by any connection (newest last): what `session/load` (v1)
 * and `session/resume` (v2) re-attach, as an agent with shared session storage would. Bounded.
 */
const knownSessions = new Set<string>();
const MAX_KNOWN_SESSIONS = 10_000;

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
    initialize: (request, context) => initialize(request, context, timers),
    newSession: () => ({ sessionId: rememberSession(randomUUID()) }),
    attachSession,
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

function rememberSession(sessionId: string): string {
  knownSessions.add(sessionId);
  if (knownSessions.size > MAX_KNOWN_SESSIONS) knownSessions.delete(knownSessions.values().next().value!);
  return sessionId;
}

/** `session/load` (v1) and `session/resume` (v2): any session made in this process; it keeps no history to replay. */
function attachSession({ sessionId }: AgentAttachSessionRequest): JsonObject {
  if (!knownSessions.has(sessionId)) throw new RpcError(ErrorCode.ResourceNotFound, 'Resource not found', { sessionId });
  return {};
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

/** Streams "echo: " and the prompt's text, one word per chunk, spread over `_meta.workMs`. */
async function runTurn(turn: AgentTurn, timers: Timers): Promise<'end_turn' | 'cancelled'> {
  const meta = isObject(turn.params._meta) ? turn.params._meta : {};
  const chunks = replyChunks(turn.prompt);
  const step = milliseconds(meta, 'workMs', 0) / chunks.length;
  for (const text of chunks) {
    if (turn.signal.aborted) return 'cancelled';
    turn.sendText(text);
    if (step > 0 && (await timers.delay(step, turn.signal)) === 'cancelled') return 'cancelled';
  }
  return 'end_turn';
}

/** The agent's reply to a prompt, as chunks: "echo: " and its text, one word per chunk. */
function replyChunks(prompt: readonly ContentBlock[]): string[] {
  const text = prompt
    .filter(
      (block): block is Extract<ContentBlock, { type: 'text' }> =>
        isObject(block) && block.type === 'text' && typeof block.text === 'string',
    )
    .map((block) => block.text)
    .join(' ');
  return `echo: ${text}`.match(/\S+\s*/g) ?? ['echo:'];
}
