/**
 * Cancellation as the ACP TCK's cancel rows drive it (ACP-CANCEL-201..207): a plain text prompt
 * that keeps the conformance agent busy, `session/cancel` while it streams, the turn ending with an
 * idle `cancelled`; and `session/close` as the other way to end a turn (ACP-CANCEL-208, in
 * close.spec.ts for `AcpAgent`).
 */
import { expect } from 'chai';
import { CLIENT_INIT, spawnAgent } from '../../helpers/conformance-agent';
import { AGENT_COMMAND, PASSTHROUGH_COMMAND, spawnConductor } from '../../helpers/chain';
import { useBuild, type SpawnedProcess } from '../../helpers/processes';

/** The ACP TCK's default cancellation prompt. */
const TCK_CANCEL_PROMPT = 'Write a very long, detailed step-by-step explanation of how a compiler works, at least 2000 words.';

type Message = {
  id?: unknown;
  method?: string;
  result?: Record<string, unknown>;
  params?: { sessionId?: string; update?: Record<string, unknown> };
};

function cancelRows(start: () => SpawnedProcess): void {
  let target: SpawnedProcess;
  let sessionId: string;
  beforeEach(async () => {
    target = start();
    await target.request('init', 'initialize', CLIENT_INIT);
    sessionId = (
      JSON.parse(await target.request('new', 'session/new', { cwd: '/tmp', mcpServers: [] })) as { result: { sessionId: string } }
    ).result.sessionId;
  });
  afterEach(() => target.stop());

  /** Sends the TCK's cancel prompt and resolves once the agent has written a few of its words. */
  async function startLongTurn(): Promise<void> {
    target.send({
      jsonrpc: '2.0',
      id: 'p',
      method: 'session/prompt',
      params: { sessionId, prompt: [{ type: 'text', text: TCK_CANCEL_PROMPT }] },
    });
    await target.stdout.find((_, line) => line.includes('" word3"'));
  }

  const isIdle = (m: Message): boolean => m.method === 'session/update' && m.params?.update?.state === 'idle';

  it('ACP-CANCEL-201/207: a plain text prompt asking for "at least 2000 words" streams until session/cancel, then ends idle "cancelled"', async () => {
    await startLongTurn();
    target.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
    const lines = (await target.stdout.takeUntil((m) => isIdle(m as Message))).map((line) => JSON.parse(line) as Message);
    expect(lines.pop()!.params!.update).to.deep.equal({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' });
    const words = lines.filter((m) => /^ word\d+$/.test(String((m.params?.update?.content as { text?: string } | undefined)?.text)));
    expect(words.length).to.be.greaterThan(2).and.lessThan(2000);
  });

  it('ACP-CANCEL-208 / ACP-CLOSE-202: session/close during that turn sends its idle "cancelled" before the close is answered', async () => {
    await startLongTurn();
    target.send({ jsonrpc: '2.0', id: 'close', method: 'session/close', params: { sessionId } });
    const lines = (await target.stdout.takeUntil((m) => m.id === 'close')).map((line) => JSON.parse(line) as Message);
    const [idle, answer] = lines.slice(-2);
    expect(idle!.params!.update).to.deep.equal({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' });
    expect(answer).to.deep.include({ id: 'close', result: {} });
  });

  it('a prompt that asks for no word count ends at once with "end_turn"', async () => {
    target.send({ jsonrpc: '2.0', id: 'p', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hello' }] } });
    const lines = (await target.stdout.takeUntil((m) => isIdle(m as Message))).map((line) => JSON.parse(line) as Message);
    expect(lines.pop()!.params!.update).to.deep.equal({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'end_turn' });
  });
}

describe('cancelling a turn (the TCK cancel rows)', () => {
  useBuild();
  describe('the conformance agent alone', () => cancelRows(() => spawnAgent()));
  describe('the conformance agent behind acp-wire conduct with two passthrough proxies', () =>
    cancelRows(() => spawnConductor([PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND])));
});
