/**
 * Every ACP message that AcpClient and AcpAgent send validates against the official JSON schema
 * of the negotiated version: a scripted session in ACP v1 and in v2 between the two
 * helpers, each side's wire trace checked.
 */
import { expect } from 'chai';
import { AcpAgent, AcpClient, type RpcError, createConnectionPair, type AgentTurn, type Connection } from '../../lib';
import { LineRecorder } from '../helpers/acp-lines';
import { closeAll } from '../helpers/events';

const PERMISSION = {
  1: { toolCall: { toolCallId: 't1', title: 'write' }, options: [{ optionId: 'yes', name: 'Allow', kind: 'allow_once' }] },
  2: { title: 'write', options: [{ optionId: 'yes', name: 'Allow', kind: 'allow_once' }] },
};

/** The agent's turn: text, a permission, in v1 the client's file system and a terminal; then waits for a cancel when asked to. */
async function runTurn(turn: AgentTurn, connection: Connection): Promise<'end_turn' | 'cancelled'> {
  const { sessionId } = turn;
  turn.sendText('working');
  await connection.sendRequest('session/request_permission', { sessionId, ...PERMISSION[turn.version] });
  if (turn.version === 1) {
    await connection.sendRequest('fs/read_text_file', { sessionId, path: '/tmp/a' });
    await connection.sendRequest('fs/write_text_file', { sessionId, path: '/tmp/b', content: 'x' });
    const { terminalId } = await connection.sendRequest<{ terminalId: string }>('terminal/create', { sessionId, command: 'ls' });
    for (const method of ['terminal/output', 'terminal/wait_for_exit', 'terminal/kill', 'terminal/release']) {
      await connection.sendRequest(method, { sessionId, terminalId });
    }
  }
  if ((turn.params._meta as { wait?: boolean } | undefined)?.wait) {
    if (!turn.signal.aborted) await new Promise((resolve) => turn.signal.addEventListener('abort', resolve));
    return 'cancelled';
  }
  return 'end_turn';
}

for (const version of [1, 2] as const) {
  describe(`AcpClient and AcpAgent messages (ACP v${version} schema)`, () => {
    const clientTrace = new LineRecorder();
    const agentTrace = new LineRecorder();
    let clientSide: Connection;
    let agentSide: Connection;

    before(async () => {
      [clientSide, agentSide] = createConnectionPair({ logger: clientTrace }, { logger: agentTrace });
      new AcpAgent(agentSide, {
        info: { name: 'schema-agent', version: '1.0.0' },
        protocolVersions: [version],
        prompt: (turn) => runTurn(turn, agentSide),
      });
      const client = new AcpClient(clientSide, {
        info: { name: 'schema-client', version: '1.0.0' },
        handlers: {
          requestPermission: () => ({ outcome: { outcome: 'selected', optionId: 'yes' } }),
          fs: { readTextFile: () => ({ content: 'a' }), writeTextFile: () => undefined },
          terminal: {
            create: () => ({ terminalId: 'term' }),
            output: () => ({ output: '', truncated: false, exitStatus: { exitCode: 0 } }),
            waitForExit: () => ({ exitCode: 0 }),
            kill: () => undefined,
            release: () => undefined,
          },
        },
      });
      expect((await client.initialize()).protocolVersion).to.equal(version);
      const { sessionId } = await client.newSession({ cwd: '/tmp' });
      const prompt = [{ type: 'text' as const, text: 'hello' }];
      expect((await client.prompt({ sessionId, prompt })).stopReason).to.equal('end_turn');
      const waiting = client.prompt({ sessionId, prompt, _meta: { wait: true } });
      for await (const update of waiting) if (update.sessionUpdate === 'agent_message_chunk') break;
      waiting.cancel();
      expect((await waiting).stopReason).to.equal('cancelled');
      const unknown = client.prompt({ sessionId: 'unknown', prompt });
      expect(
        await unknown.then(
          () => undefined,
          (error: unknown) => (error as RpcError).code,
        ),
      ).to.equal(-32002);
    });

    after(() => closeAll(clientSide, agentSide));

    it('validates every message the client sent', () => {
      const { errors, checked } = clientTrace.schemaErrors('client', version);
      expect(errors).to.deep.equal([]);
      expect(checked.length).to.be.at.least(version === 1 ? 13 : 6);
    });

    it('validates every message the agent sent', () => {
      const { errors, checked } = agentTrace.schemaErrors('agent', version);
      expect(errors).to.deep.equal([]);
      expect(checked.length).to.be.at.least(version === 1 ? 12 : 12);
    });
  });
}
