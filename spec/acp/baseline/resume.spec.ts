/**
 * `session/resume` (and v1 `session/load`) as the ACP TCK checks it (ACP-RESUME-201..205): served
 * by `AcpAgent` from its session store, with the conversation replayed whole when asked.
 */
import { expect } from 'chai';
import { ErrorCode, MemorySessionStore } from '../../../lib';
import { AgentUnderTest, textPrompt, type Update } from '../../helpers/baseline';

describe('AcpAgent session/resume and session/load', () => {
  let under: AgentUnderTest;
  afterEach(() => under.close());

  async function sessionWithOneTurn(): Promise<{ sessionId: string; messageId: string }> {
    await under.initialize();
    const sessionId = await under.newSession('/work');
    const { messageId } = await under.result<{ messageId: string }>('session/prompt', textPrompt(sessionId, 'remember this'));
    await under.untilIdle(sessionId);
    return { sessionId, messageId };
  }

  it('ACP-RESUME-201: resuming a session made on the same connection succeeds, valid by the v2 schema', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    const sessionId = await under.newSession('/work');
    expect(await under.result('session/resume', { sessionId, cwd: '/work' })).to.deep.equal({});
  });

  it('ACP-RESUME-202/204: replayFrom start replays each message whole, with its original messageId, then the state, then the answer', async () => {
    under = new AgentUnderTest();
    const { sessionId, messageId } = await sessionWithOneTurn();
    const agentMessageId = (under.updatesOf(sessionId).find((u) => u.sessionUpdate === 'agent_message_chunk') as Update).messageId;
    const id = under.send('session/resume', { sessionId, cwd: '/work', replayFrom: { type: 'start' } });
    const lines = await under.peer.out.takeUntil((m) => m.id === id);
    const replay = under.updatesOf(
      sessionId,
      lines.map((line) => JSON.parse(line)),
    );
    expect(replay).to.deep.equal([
      { sessionUpdate: 'user_message', messageId, content: [{ type: 'text', text: 'remember this' }] },
      { sessionUpdate: 'agent_message', messageId: agentMessageId, content: [{ type: 'text', text: 'echo: remember this' }] },
      { sessionUpdate: 'state_update', state: 'idle' },
    ]);
    expect(JSON.parse(lines[lines.length - 1]!)).to.deep.include({ id, result: {} });
  });

  it('ACP-RESUME-203: without replayFrom nothing of the conversation is replayed, only the current state', async () => {
    under = new AgentUnderTest();
    const { sessionId } = await sessionWithOneTurn();
    const id = under.send('session/resume', { sessionId, cwd: '/work' });
    const lines = await under.peer.out.takeUntil((m) => m.id === id);
    expect(
      under.updatesOf(
        sessionId,
        lines.map((line) => JSON.parse(line)),
      ),
    ).to.deep.equal([{ sessionUpdate: 'state_update', state: 'idle' }]);
  });

  it('ACP-RESUME-205: replays whole messages only (no chunk without its primer)', async () => {
    under = new AgentUnderTest({
      prompt(turn) {
        for (const word of ['one ', 'two ', 'three']) turn.sendText(word);
        turn.update({ sessionUpdate: 'agent_thought_chunk', messageId: 'thought-1', content: { type: 'text', text: 'hmm' } });
        return 'end_turn';
      },
    });
    const { sessionId } = await sessionWithOneTurn();
    const id = under.send('session/resume', { sessionId, cwd: '/work', replayFrom: { type: 'start' } });
    const replay = under.updatesOf(
      sessionId,
      (await under.peer.out.takeUntil((m) => m.id === id)).map((line) => JSON.parse(line)),
    );
    expect(replay.map((u) => u.sessionUpdate)).to.deep.equal(['user_message', 'agent_message', 'agent_thought', 'state_update']);
    expect(replay[1]!.content).to.deep.equal([{ type: 'text', text: 'one two three' }]);
    expect(replay[2]).to.deep.include({ messageId: 'thought-1', content: [{ type: 'text', text: 'hmm' }] });
  });

  it('reports "running" as the current state when a turn of the session is running', async () => {
    under = new AgentUnderTest({
      prompt: (turn) => new Promise((resolve) => turn.signal.addEventListener('abort', () => resolve('end_turn'))),
    });
    await under.initialize();
    const sessionId = await under.newSession('/work');
    await under.result('session/prompt', textPrompt(sessionId, 'long'));
    const id = under.send('session/resume', { sessionId, cwd: '/work' });
    const lines = await under.peer.out.takeUntil((m) => m.id === id);
    expect(
      under
        .updatesOf(
          sessionId,
          lines.map((line) => JSON.parse(line)),
        )
        .pop(),
    ).to.deep.equal({ sessionUpdate: 'state_update', state: 'running' });
    under.notify('session/cancel', { sessionId });
    await under.untilIdle(sessionId);
  });

  it('answers -32002 for a session the store does not know, -32602 for another cwd or a replayFrom it cannot serve', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    expect(await under.errorCode('session/resume', { sessionId: 'never-made', cwd: '/work' })).to.equal(ErrorCode.ResourceNotFound);
    const sessionId = await under.newSession('/work');
    expect(await under.errorCode('session/resume', { sessionId, cwd: '/elsewhere' })).to.equal(ErrorCode.InvalidParams);
    expect(await under.errorCode('session/resume', { sessionId, cwd: '/work', replayFrom: { type: '_custom' } })).to.equal(
      ErrorCode.InvalidParams,
    );
  });

  it('re-opens a closed session, which then takes prompts again', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    const sessionId = await under.newSession('/work');
    await under.result('session/close', { sessionId });
    await under.result('session/resume', { sessionId, cwd: '/work' });
    await under.result('session/prompt', textPrompt(sessionId, 'again'));
    expect((await under.untilIdle(sessionId)).pop()!.params!.update).to.deep.include({ stopReason: 'end_turn' });
  });

  it('resumes on another connection a session made on one, when both agents share a store', async () => {
    const store = new MemorySessionStore();
    under = new AgentUnderTest({ sessions: store });
    const { sessionId, messageId } = await sessionWithOneTurn();
    const other = new AgentUnderTest({ sessions: store });
    try {
      await other.initialize();
      const id = other.send('session/resume', { sessionId, cwd: '/work', replayFrom: { type: 'start' } });
      const replay = other.updatesOf(
        sessionId,
        (await other.peer.out.takeUntil((m) => m.id === id)).map((line) => JSON.parse(line)),
      );
      expect(replay[0]).to.deep.include({ sessionUpdate: 'user_message', messageId });
    } finally {
      await other.close();
    }
  });

  it('v1: session/load replays the conversation as v1 chunks before its answer; session/resume replays nothing', async () => {
    under = new AgentUnderTest();
    await under.initialize(1);
    const sessionId = await under.newSession('/work');
    const prompt = under.send('session/prompt', textPrompt(sessionId, 'remember this'));
    await under.peer.out.takeUntil((m) => m.id === prompt);
    const load = under.send('session/load', { sessionId, cwd: '/work', mcpServers: [] });
    const loaded = under.updatesOf(
      sessionId,
      (await under.peer.out.takeUntil((m) => m.id === load)).map((line) => JSON.parse(line)),
    );
    expect(loaded).to.deep.equal([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'remember this' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'echo: remember this' } },
    ]);
    const resume = under.send('session/resume', { sessionId, cwd: '/work' });
    expect(
      under.updatesOf(
        sessionId,
        (await under.peer.out.takeUntil((m) => m.id === resume)).map((line) => JSON.parse(line)),
      ),
    ).to.deep.equal([]);
  });

  it('hands each turn the workspace the last session/new or session/resume gave', async () => {
    const seen: unknown[] = [];
    under = new AgentUnderTest({
      prompt(turn) {
        seen.push([turn.cwd, turn.additionalDirectories]);
        return 'end_turn';
      },
    });
    await under.initialize();
    const { sessionId } = await under.result<{ sessionId: string }>('session/new', {
      cwd: '/work',
      mcpServers: [],
      additionalDirectories: ['/lib'],
    });
    await under.result('session/prompt', textPrompt(sessionId, 'one'));
    await under.untilIdle(sessionId);
    await under.result('session/resume', { sessionId, cwd: '/work', additionalDirectories: ['/other', '/more'] });
    await under.result('session/prompt', textPrompt(sessionId, 'two'));
    await under.untilIdle(sessionId);
    expect(seen).to.deep.equal([
      ['/work', ['/lib']],
      ['/work', ['/other', '/more']],
    ]);
  });

  it('v2: session/load is not a v2 method (-32601)', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    const sessionId = await under.newSession('/work');
    expect(await under.errorCode('session/load', { sessionId, cwd: '/work', mcpServers: [] })).to.equal(ErrorCode.MethodNotFound);
  });

  it('keeps at most maxMessages messages of a conversation, the newest', async () => {
    const store = new MemorySessionStore({ maxMessages: 2 });
    under = new AgentUnderTest({ sessions: store });
    const { sessionId } = await sessionWithOneTurn();
    await under.result('session/prompt', textPrompt(sessionId, 'second'));
    await under.untilIdle(sessionId);
    expect(store.history(sessionId).map((m) => m.content)).to.deep.equal([
      [{ type: 'text', text: 'second' }],
      [{ type: 'text', text: 'echo: second' }],
    ]);
  });
});
