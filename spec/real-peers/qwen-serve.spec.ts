/**
 * `qwen serve`, Qwen Code's daemon (a real remote ACP server nobody here wrote), driven by
 * `AcpClient` over acp-wire's own remote transports: `connectWebSocket` and `connectHttp` to its
 * `/acp` endpoint on 127.0.0.1, its model a fake Chat Completions API on 127.0.0.1. On each: ACP v1
 * negotiated, a whole turn, a turn cancelled by `session/cancel`, the connection closed. Then the
 * daemon is stopped with SIGTERM, as a service manager stops it, and nothing it started runs on.
 * What its dialect does differently is in docs/remote.md ("qwen serve").
 */
import { expect } from 'chai';
import { AcpClient, connectHttp, connectWebSocket, type Connection } from '../../lib';
import { HOLD_MARKER, type FakeModelBackend } from '../../lib/check/fake-models/host';
import { spawnProcessTree, type ProcessTree } from '../../lib/transports/process-tree';
import { CURRENT_AGENTS, agentTitle } from '../helpers/current-agents';
import type { LineReader } from '../helpers/lines';
import { descendants, processesEnded } from '../helpers/process-table';
import {
  REAL_PEERS,
  makeTempHome,
  peerReader,
  processesWithHome,
  promptAndCollect,
  requireRealPeers,
  textOf,
  type TempHome,
} from '../helpers/real-peers';

const QWEN = CURRENT_AGENTS.qwenCode;

/** How a test reaches the daemon's `/acp` endpoint. */
interface Transport {
  readonly name: string;
  connect(origin: string): Promise<Connection> | Connection;
  /** What closing the connection did on the server, when it can be seen from outside. */
  readonly closed?: { readonly claim: string; check(origin: string, connectionId: string): Promise<void> };
}

const TRANSPORTS: readonly Transport[] = [
  { name: 'over WebSocket (connectWebSocket)', connect: (origin) => connectWebSocket(`${origin.replace(/^http/, 'ws')}/acp`) },
  {
    name: 'over Streamable HTTP (connectHttp)',
    connect: (origin) => connectHttp(`${origin}/acp`),
    closed: {
      claim: ' (its DELETE): a POST naming the connection is then answered 404',
      check: async (origin, connectionId) => {
        const response = await fetch(`${origin}/acp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'acp-connection-id': connectionId },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/list', params: {} }),
        });
        expect(response.status).to.equal(404);
        expect(await response.json()).to.deep.include({ error: { code: -32600, message: 'Unknown Acp-Connection-Id' } });
      },
    },
  },
];

/** The connection id qwen serve gives in its `initialize` answer (`_meta.qwen.connectionId`, the `Acp-Connection-Id` of HTTP). */
function connectionIdOf(capabilities: unknown): string {
  const id = (capabilities as { _meta?: { qwen?: { connectionId?: unknown } } })._meta?.qwen?.connectionId;
  expect(id, 'the connection id in the initialize answer').to.be.a('string');
  return id as string;
}

describe(`qwen serve (${agentTitle(QWEN)}) driven by AcpClient over acp-wire's remote transports, with a fake model on 127.0.0.1`, function () {
  this.timeout(60_000);
  let model: FakeModelBackend;
  let home: TempHome;
  let serve: ProcessTree;
  let stderr: LineReader;
  let origin: string;

  before(async () => {
    requireRealPeers();
    model = await QWEN.startModel();
    home = await makeTempHome('qwen-serve');
    const env = await QWEN.environment(home, model);
    serve = spawnProcessTree(REAL_PEERS.node22, [REAL_PEERS.qwen, 'serve', '--port', '0', '--no-web'], {
      cwd: home.path,
      env,
      stderr: 'pipe',
    });
    serve.child.stdin!.end();
    const stdout = peerReader(serve.child.stdout!, 'qwen serve stdout');
    stderr = peerReader(serve.child.stderr!, 'qwen serve stderr');
    const listening = /^qwen serve listening on (http:\/\/127\.0\.0\.1:\d+) /m;
    origin = listening.exec(await stdout.findText(listening))![1]!;
    // It listens first, and mounts /acp once its runtime has started.
    await stderr.findText(/\/acp WebSocket transport enabled on \/acp/);
  });

  after(async () => {
    serve?.group?.signal('SIGTERM');
    await serve?.end(5000);
    if (home) for (const pid of processesWithHome(home)) process.kill(pid, 'SIGKILL'); // only if a test failed
    await model?.close();
    await home?.remove();
  });

  for (const transport of TRANSPORTS) {
    describe(transport.name, () => {
      let connection: Connection;
      let client: AcpClient;
      let sessionId: string;
      let connectionId: string;

      after(() => connection?.close());

      it('negotiates ACP v1 when offered v2', async () => {
        connection = await transport.connect(origin);
        client = new AcpClient(connection);
        const answer = await client.initialize();
        expect(answer.protocolVersion).to.equal(1);
        expect(client.protocolVersion).to.equal(1);
        connectionId = connectionIdOf(answer.capabilities);
      });

      it('opens a session in the workspace it serves', async () => {
        ({ sessionId } = await client.newSession({ cwd: home.path, mcpServers: [] }));
        expect(sessionId, stderr.text).to.be.a('string').and.not.equal('');
      });

      it("streams a prompt to the end: the model's words as agent_message_chunk updates, then end_turn", async () => {
        const { turn, updates } = promptAndCollect(client, sessionId, 'Say hello');
        expect(await turn).to.include({ stopReason: 'end_turn' });
        expect(textOf(updates)).to.equal(model.reply);
        const turns = model.requests.filter((request) => request.path.startsWith(QWEN.modelPath));
        expect(JSON.stringify(turns.at(-1)?.body)).to.include('Say hello');
      });

      it('ends a turn cancelled by session/cancel mid-stream with stopReason cancelled, and hangs up on the model', async () => {
        const { turn, updates, firstText } = promptAndCollect(client, sessionId, `Say hello slowly ${HOLD_MARKER}`);
        const held = await model.nextHeldTurn();
        await firstText;
        turn.cancel();
        expect(await turn).to.include({ stopReason: 'cancelled' });
        await held.disconnected;
        expect(textOf(updates)).not.to.equal(model.reply);
      });

      it(`closes the connection${transport.closed?.claim ?? ''}`, async () => {
        await connection.close();
        expect(connection.isClosed).to.equal(true);
        await transport.closed?.check(origin, connectionId);
      });
    });
  }

  // A suite of its own: mocha runs a suite's tests before its child suites.
  describe('stopped', () => {
    it('exits on SIGTERM, and nothing it started keeps running', async () => {
      const pid = serve.child.pid!;
      const tree = [pid, ...descendants(pid)];
      expect(tree.length, `the running tree: ${tree.join(' ')}`).to.be.at.least(2);
      process.kill(pid, 'SIGTERM');
      expect(await serve.exited).to.deep.equal({ code: 0, signal: null });
      await processesEnded(tree);
      expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
    });
  });
});
