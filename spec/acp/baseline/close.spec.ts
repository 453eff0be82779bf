/**
 * `session/close` as the ACP TCK checks it (ACP-CLOSE-201, ACP-CLOSE-202 / ACP-CANCEL-208) and as
 * the v2 schema says: the session's foreground work is cancelled first (its idle `cancelled` goes
 * out before the answer), prompts not yet inserted are answered `-32800`, nothing more is sent for
 * the session, and a session that is not open is an error, never a hang.
 */
import { expect } from 'chai';
import { ErrorCode, type AgentTurn } from '../../../lib';
import { deferred } from '../../helpers/async';
import { AgentUnderTest, textPrompt, untilCancelled, type Wire } from '../../helpers/baseline';

describe('AcpAgent session/close', () => {
  let under: AgentUnderTest;
  afterEach(() => under.close());

  it('ACP-CLOSE-201: closing an idle session answers {}, valid by the v2 schema', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    const sessionId = await under.newSession();
    expect(await under.result('session/close', { sessionId })).to.deep.equal({});
  });

  it('ACP-CLOSE-202 / ACP-CANCEL-208: closing during a turn aborts it and sends its idle "cancelled" before the answer', async () => {
    const aborted = deferred<void>();
    under = new AgentUnderTest({
      prompt: (turn) => {
        turn.signal.addEventListener('abort', () => aborted.resolve());
        return untilCancelled(turn);
      },
    });
    await under.initialize();
    const sessionId = await under.newSession();
    await under.result('session/prompt', textPrompt(sessionId, 'work'));
    await under.peer.out.find((_, line) => line.includes('"working"'));
    const id = under.send('session/close', { sessionId });
    const lines = (await under.peer.out.takeUntil((m) => m.id === id)).map((line) => JSON.parse(line) as Wire);
    await aborted.promise;
    const tail = lines.filter((m) => m.method === 'session/update' || m.id === id).slice(-3);
    expect(tail.map((m) => (m.id === id ? { answer: m.result } : (m.params!.update as Record<string, unknown>)))).to.deep.equal([
      {
        sessionUpdate: 'agent_message_chunk',
        messageId: (tail[0]!.params!.update as { messageId: string }).messageId,
        content: { type: 'text', text: 'stopped' },
      },
      { sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' },
      { answer: {} },
    ]);
  });

  it('answers -32800 to a prompt held before insertion when its session closes', async () => {
    under = new AgentUnderTest({
      admitPrompt: (_request, { signal }) => new Promise((resolve) => signal.addEventListener('abort', resolve)),
    });
    await under.initialize();
    const sessionId = await under.newSession();
    const prompt = under.send('session/prompt', textPrompt(sessionId, 'held'));
    expect(await under.result('session/close', { sessionId })).to.deep.equal({});
    expect(await under.peer.out.response(prompt)).to.deep.equal({
      jsonrpc: '2.0',
      id: prompt,
      error: { code: -32800, message: 'Request cancelled' },
    });
  });

  it('sends nothing more for the session once closed, even from a turn handler that keeps sending', async () => {
    let late: AgentTurn | undefined;
    under = new AgentUnderTest({
      prompt: (turn) => {
        late = turn;
        return untilCancelled(turn);
      },
    });
    await under.initialize();
    const sessionId = await under.newSession();
    await under.result('session/prompt', textPrompt(sessionId, 'work'));
    await under.result('session/close', { sessionId });
    late!.sendText('after the close');
    const probe = under.peer.linesBeforeProbe();
    expect((await probe).filter((line) => line.includes('after the close'))).to.deep.equal([]);
  });

  it('reports the turn ended "cancelled" after closeGraceMs when its handler ignores the abort, and answers', async () => {
    const never = deferred<'end_turn'>();
    under = new AgentUnderTest({ closeGraceMs: 50, prompt: () => never.promise });
    await under.initialize();
    const sessionId = await under.newSession();
    await under.result('session/prompt', textPrompt(sessionId, 'stuck'));
    const id = under.send('session/close', { sessionId });
    const lines = (await under.peer.out.takeUntil((m) => m.id === id)).map((line) => JSON.parse(line) as Wire);
    expect(under.updatesOf(sessionId, lines).pop()).to.deep.equal({
      sessionUpdate: 'state_update',
      state: 'idle',
      stopReason: 'cancelled',
    });
    never.resolve('end_turn');
    const after = await under.peer.linesBeforeProbe();
    expect(after.filter((line) => line.includes('"idle"'))).to.deep.equal([]);
  });

  it('answers -32002 for a session that is unknown or already closed, and a prompt to a closed session -32002', async () => {
    under = new AgentUnderTest();
    await under.initialize();
    expect(await under.errorCode('session/close', { sessionId: 'never-made' })).to.equal(ErrorCode.ResourceNotFound);
    const sessionId = await under.newSession();
    await under.result('session/close', { sessionId });
    expect(await under.errorCode('session/close', { sessionId })).to.equal(ErrorCode.ResourceNotFound);
    expect(await under.errorCode('session/prompt', textPrompt(sessionId, 'hello?'))).to.equal(ErrorCode.ResourceNotFound);
  });

  it('calls closeSession once the work has ended, with the session', async () => {
    const order: string[] = [];
    under = new AgentUnderTest({
      prompt: async (turn) => {
        await untilCancelled(turn);
        order.push('turn ended');
        return 'end_turn';
      },
      closeSession: ({ sessionId }) => void order.push(`closeSession ${sessionId}`),
    });
    await under.initialize();
    const sessionId = await under.newSession();
    await under.result('session/prompt', textPrompt(sessionId, 'work'));
    await under.result('session/close', { sessionId });
    expect(order).to.deep.equal(['turn ended', `closeSession ${sessionId}`]);
  });

  it('v1: answers the running prompt {stopReason: "cancelled"}, then the close', async () => {
    under = new AgentUnderTest({ prompt: untilCancelled });
    await under.initialize(1);
    const sessionId = await under.newSession();
    const prompt = under.send('session/prompt', textPrompt(sessionId, 'work'));
    await under.peer.out.find((_, line) => line.includes('"working"'));
    const close = under.send('session/close', { sessionId });
    const lines = (await under.peer.out.takeUntil((m) => m.id === close)).map((line) => JSON.parse(line) as Wire);
    const answers = lines.filter((m) => m.id === prompt || m.id === close).map((m) => [m.id, m.result]);
    expect(answers).to.deep.equal([
      [prompt, { stopReason: 'cancelled' }],
      [close, {}],
    ]);
  });
});
