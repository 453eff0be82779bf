/**
 * The first step of a run: the agent is started and initialized once before any check. An agent
 * that cannot be (it does not start, exits, does not answer `initialize` in time, or answers it
 * with an error) ends the run at once with {@link AgentUnusableError}, not with a report in which
 * every check fails for the same reason.
 *
 * @packageDocumentation
 */
import { AcpWireError } from '../jsonrpc/errors';
import { PROXY_INITIALIZE_METHOD } from '../jsonrpc/protocol';
import type { AgentProcess } from './agent-process';
import { type CheckContext, stderrExcerpt } from './context';
import { CheckFailure } from './outcome';
import { shortText } from './wire-line';

/** Why the agent could not be used. */
export type AgentUnusableReason = 'not-started' | 'exited' | 'no-answer' | 'initialize-error';

/**
 * The agent under check could not be started or initialized: no check can run.
 *
 * @remarks `acp-wire check` exits with code 3 on it. Every process the run started has been ended
 * before `checkAgent()` rejects with it.
 */
export class AgentUnusableError extends AcpWireError {
  /** Always `'AgentUnusableError'`. */
  override readonly name = 'AgentUnusableError';
  /** Always `'ACP_WIRE_CHECK_AGENT_UNUSABLE'`. */
  readonly code = 'ACP_WIRE_CHECK_AGENT_UNUSABLE';
  /** What went wrong: it could not be started, exited, did not answer `initialize` in time, or answered it with an error. */
  readonly reason: AgentUnusableReason;
  /** The last lines of its stderr that say why ('' when it wrote none). */
  readonly stderr: string;

  constructor(reason: AgentUnusableReason, message: string, stderr: string) {
    super(message);
    this.reason = reason;
    this.stderr = stderr;
  }
}

/**
 * Starts the first group's shared agent and initializes it (see {@link CheckContext.agent}).
 *
 * @throws AgentUnusableError when it cannot be started or initialized
 */
export async function preflight(context: CheckContext): Promise<void> {
  try {
    await context.agent();
  } catch (error) {
    const agent = context.sharedProcess;
    if (!(error instanceof CheckFailure) || !agent) throw error;
    await context.settle(agent);
    throw unusable(agent, context.settings.timeoutMs, context.settings.role);
  }
}

function unusable(agent: AgentProcess, timeoutMs: number, role: string): AgentUnusableError {
  const method = role === 'proxy' ? PROXY_INITIALIZE_METHOD : 'initialize';
  const stderr = stderrExcerpt(agent);
  const onStderr = stderr === '' ? '' : `; stderr: ${stderr}`;
  const exit = agent.exit;
  if (exit?.error) return new AgentUnusableError('not-started', `the agent could not be started: ${exit.error.message}`, stderr);
  const answer = [...agent.sent.values()].find((sent) => sent.method === method)?.answers[0];
  if (answer)
    return new AgentUnusableError('initialize-error', `the agent answered ${method} with an error: ${shortText(answer.text)}`, stderr);
  if (exit || agent.isOutputEnded) {
    const how = exit ? `exited (${exit.signal ?? `code ${exit.code}`})` : 'closed its stdout';
    return new AgentUnusableError('exited', `the agent ${how} before it answered ${method}${onStderr}`, stderr);
  }
  return new AgentUnusableError('no-answer', `the agent did not answer ${method} within ${timeoutMs} ms (--timeout)${onStderr}`, stderr);
}
