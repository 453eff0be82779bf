/**
 * The lifecycle checks: the agent exits when its stdin ends, leaves no process of its tree behind,
 * and survives (does not crash on) a client that disappears mid-turn.
 *
 * @packageDocumentation
 */
import type { AgentProcess } from './agent-process';
import { exitsWithin, groupMembers } from './process-end';
import { RULES } from './rules';
import { type CheckContext, stderrExcerpt, UNKNOWN_METHOD } from './context';
import type { Check } from './check';
import { type CheckOutcome, fail, notApplicable, pass } from './outcome';
import { sendPrompt, turnUnderWay } from './turns';
import { shortText } from './wire-line';

const STDIN_END_KEY = 'lifecycle:stdin-end';

/** An initialized agent of its own, with a session and a finished turn when turns run (so that its helpers have started). */
async function busyAgent(context: CheckContext): Promise<AgentProcess> {
  const agent = context.spawn();
  context.noteVersion(agent, await context.initialize(agent, context.offer));
  if (!context.settings.canRunTurns) return agent;
  const answer = await context.expectAnswer(agent, 'session/new', { cwd: context.settings.sessionCwd, mcpServers: [] });
  const sessionId = (answer.message?.result as { sessionId?: unknown } | undefined)?.sessionId;
  if (typeof sessionId === 'string') await agent.answer(sendPrompt(context, { agent, sessionId }, false), context.settings.timeoutMs);
  return agent;
}

const stdinEnd: Check = {
  id: 'lifecycle.stdin-end',
  group: 'lifecycle',
  title: 'the agent exits when its stdin ends',
  rule: RULES.exitAtStdinEnd,
  async run(context) {
    const agent = await busyAgent(context);
    const start = performance.now();
    agent.endInput();
    const hasExited = await exitsWithin(agent, context.settings.exitTimeoutMs);
    context.keepForGroup(agent);
    context.memo.set(STDIN_END_KEY, agent);
    if (!hasExited) return fail(`still running ${context.settings.exitTimeoutMs} ms after its stdin ended`);
    const exit = agent.exit!;
    return pass(`exited (${exit.signal ?? `code ${exit.code}`}) ${Math.round(performance.now() - start)} ms after its stdin ended`);
  },
};

const noLeftover: Check = {
  id: 'lifecycle.no-leftover',
  group: 'lifecycle',
  title: 'once the agent has exited (at the end of its stdin, or SIGTERM), nothing of its process group runs',
  rule: RULES.nothingLeftBehind,
  async run(context) {
    const agent = context.memo.get(STDIN_END_KEY) as AgentProcess | undefined;
    const group = agent?.tree.group;
    if (!agent || agent.pid === undefined) return notApplicable('lifecycle.stdin-end did not start an agent');
    if (!group) return notApplicable('no process groups on this platform');
    let how = 'its stdin ended';
    if (!agent.exit) {
      process.kill(agent.pid, 'SIGTERM');
      how = 'SIGTERM (to the agent alone)';
      if (!(await exitsWithin(agent, context.settings.exitTimeoutMs))) return notApplicable(`it did not exit after ${how} either`);
    }
    if (await group.waitUntilEmpty(context.settings.exitTimeoutMs)) return pass(`exited after ${how}`);
    const members = groupMembers(group.pgid);
    return fail(
      `${context.settings.exitTimeoutMs} ms after the agent exited (after ${how}), its group still runs ${members.join(', ') || 'processes'}`,
    );
  },
};

/** The outcome once the client has gone: exited with code 0 (pass), still running, or ended with an error (a code, a signal). */
async function afterClientGone(context: CheckContext, agent: AgentProcess): Promise<CheckOutcome> {
  const { exitTimeoutMs } = context.settings;
  if (!(await exitsWithin(agent, exitTimeoutMs))) return fail(`still running ${exitTimeoutMs} ms after its client went away mid-turn`);
  const exit = agent.exit!;
  if (exit.code === 0) return pass('exited with code 0');
  const excerpt = stderrExcerpt(agent);
  const stderr = excerpt === '' ? '' : `; stderr: ${excerpt}`;
  return fail(`it ended with an error when its client went away mid-turn: exit ${exit.signal ?? `code ${exit.code}`}${stderr}`);
}

const clientGone: Check = {
  id: 'lifecycle.client-gone',
  group: 'lifecycle',
  title: 'when its client goes away mid-turn, the agent exits with code 0 (not with an error, and does not run on)',
  rule: RULES.clientGoneExit,
  async run(context) {
    if (!context.settings.canRunTurns) return notApplicable('turns are not run (--no-turns)');
    const agent = context.spawn();
    context.noteVersion(agent, await context.initialize(agent, context.offer));
    const answer = await context.expectAnswer(agent, 'session/new', { cwd: context.settings.sessionCwd, mcpServers: [] });
    const sessionId = (answer.message?.result as { sessionId?: unknown } | undefined)?.sessionId;
    if (typeof sessionId !== 'string') return fail(`session/new was not answered with a sessionId: ${shortText(answer.text)}`);
    const session = { agent, sessionId };
    await turnUnderWay(context, session, sendPrompt(context, session, true));
    // The client goes away in a fixed order, so that every agent meets the same: first it stops
    // reading, then the agent has something to write (an answer owed, the rest of the turn from
    // the fake model), then its stdin ends.
    agent.stopReading();
    agent.request(UNKNOWN_METHOD);
    context.settings.finishHeldTurns?.();
    await context.pause(context.settings.quietMs);
    agent.endInput();
    return afterClientGone(context, agent);
  },
};

/** The lifecycle group. */
export const LIFECYCLE_CHECKS: readonly Check[] = [stdinEnd, noLeftover, clientGone];
