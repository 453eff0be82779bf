/**
 * codex-acp, the real agent (a Node launcher and a native binary), driven by acp-wire with no
 * internet: its model is a fake Responses API server on 127.0.0.1 that the spec starts.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { AcpClient, spawnConnection, type ChildConnection } from '../../lib';
import { HOLD_MARKER, startFakeModelServer, type FakeModelServer } from '../../lib/check/fake-models/openai-responses';
import type { LineReader } from '../helpers/lines';
import { descendants, isRunning } from '../helpers/process-table';
import { CLI, PASSTHROUGH_PROXY, ROOT, useBuild } from '../helpers/processes';
import {
  REAL_PEERS,
  REAL_PEERS_PACKAGE,
  commandLine,
  installedVersion,
  makeTempHome,
  peerReader,
  processesWithHome,
  promptAndCollect,
  requireRealPeers,
  textOf,
  writeCodexConfig,
  type TempHome,
} from '../helpers/real-peers';

/** What codex answers to `$/cancel_request`, a notification it does not know: an error without an id. */
const CANCEL_REQUEST_ANSWER = '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"$/cancel_request"}}';

interface Route {
  readonly name: string;
  /** The program and arguments spawned by the test. */
  readonly argv: readonly string[];
  /** The smallest process tree expected while it runs. */
  readonly treeSize: number;
  /** Where the proof that codex answered `$/cancel_request` shows: the client's stdout, or the conductor's trace. */
  readonly cancelAnswerOn: 'stdout' | 'stderr';
}

const ROUTES: readonly Route[] = [
  {
    name: 'directly (launcher and binary)',
    argv: [process.execPath, REAL_PEERS.codexAcp],
    treeSize: 2,
    cancelAnswerOn: 'stdout',
  },
  {
    name: 'through `acp-wire conduct` with two passthrough proxies (codex started with `npx`)',
    argv: [
      process.execPath,
      CLI,
      'conduct',
      '--trace',
      commandLine('node', PASSTHROUGH_PROXY),
      commandLine('node', PASSTHROUGH_PROXY),
      // Not `npx codex-acp`: @agentclientprotocol/codex-acp, in the same package, owns that bin now.
      commandLine('npx', '--no-install', '--', 'node', REAL_PEERS.codexAcp),
    ],
    // conductor, two proxies, npm exec, sh -c, the launcher, the binary
    treeSize: 7,
    cancelAnswerOn: 'stderr',
  },
];

/** The lines of `lines` that answer request `id` (a result or an error). */
function answersTo(lines: readonly string[], id: number): unknown[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((message) => message.id === id && ('result' in message || 'error' in message));
}

describe(`codex-acp ${installedVersion('@zed-industries/codex-acp')} (real agent) with a fake model on 127.0.0.1`, function () {
  this.timeout(60_000);
  useBuild();

  for (const route of ROUTES) {
    describe(route.name, () => {
      let server: FakeModelServer;
      let home: TempHome;
      let peer: ChildConnection | undefined;
      let stdout: LineReader;
      let stderr: LineReader;
      let client: AcpClient;
      let sessionId: string;

      before(async () => {
        requireRealPeers();
        server = await startFakeModelServer();
        home = await makeTempHome('codex');
        await writeCodexConfig(home, server.baseUrl);
        const [command, ...args] = route.argv;
        peer = spawnConnection(command!, args, {
          // `npx --no-install` runs in the nested package, offline (npm exec, then sh -c, start the launcher).
          cwd: REAL_PEERS_PACKAGE,
          env: home.env({
            OPENAI_API_KEY: 'sk-fake-key-for-a-local-server',
            npm_config_offline: 'true',
            npm_config_update_notifier: 'false',
          }),
          stderr: 'pipe',
          killTimeoutMs: 2000,
        });
        stdout = peerReader(peer.child.stdout!, `${route.name} stdout`);
        stderr = peerReader(peer.child.stderr!, `${route.name} stderr`);
        client = new AcpClient(peer.connection);
      });

      after(async () => {
        await peer?.close();
        await server?.close();
        await home?.remove();
      });

      it('negotiates ACP v1 when offered v2', async () => {
        const agent = await client.initialize();
        expect(agent.protocolVersion).to.equal(1);
        expect(client.protocolVersion).to.equal(1);
        expect(agent.authMethods.map((method) => (method as { id?: unknown }).id)).to.include('openai-api-key');
      });

      it('authenticates with openai-api-key and opens a session', async () => {
        expect(await client.authenticate('openai-api-key')).to.deep.equal({});
        ({ sessionId } = await client.newSession({ cwd: home.path }));
        expect(sessionId).to.be.a('string').and.not.equal('');
      });

      it("streams a prompt to the end: the model's words as agent_message_chunk updates, then end_turn", async () => {
        const { turn, updates } = promptAndCollect(client, sessionId, 'Say hello');
        const result = await turn;
        expect(result).to.include({ version: 1, stopReason: 'end_turn' });
        expect(textOf(updates)).to.equal(server.reply);
        expect(JSON.stringify(server.requests.at(-1)?.body)).to.include('Say hello');
      });

      it('ends a turn cancelled by session/cancel mid-stream with stopReason cancelled', async () => {
        const { turn, firstText } = promptAndCollect(client, sessionId, `Say hello slowly ${HOLD_MARKER}`);
        const held = await server.nextHeldTurn();
        await firstText;
        turn.cancel();
        expect(await turn).to.include({ version: 1, stopReason: 'cancelled' });
        // codex keeps reading the model's stream after the cancel (it does not hang up): end it.
        held.finish();
      });

      it('answers $/cancel_request with an error without an id, and still ends that turn with its one answer', async () => {
        const { turn, updates, firstText } = promptAndCollect(client, sessionId, `Say hello again ${HOLD_MARKER}`);
        const held = await server.nextHeldTurn();
        await firstText;
        expect(turn.request.cancel()).to.equal(true);
        if (route.cancelAnswerOn === 'stdout') {
          await stdout.findText(new RegExp(`^${escapeRegExp(CANCEL_REQUEST_ANSWER)}$`, 'm'));
        } else {
          // The conductor drops it at the agent's hop; its trace shows that codex sent it.
          await stderr.findText(/Method not found.*\$\/cancel_request/);
          expect(
            stdout.lines.filter((line) => !('id' in (JSON.parse(line) as object))).filter((line) => line.includes('"error"')),
          ).to.deep.equal([]);
        }
        held.finish();
        expect(await turn).to.include({ version: 1, stopReason: 'end_turn' });
        expect(textOf(updates)).to.equal(server.reply);
        expect(answersTo(stdout.lines, turn.request.id as number)).to.have.lengthOf(1);
      });

      it('leaves no process behind once closed', async () => {
        const tree = [peer!.child.pid!, ...descendants(peer!.child.pid!)];
        expect(tree.length, `the running tree: ${tree.join(' ')}`).to.be.at.least(route.treeSize);
        await peer!.close();
        expect(tree.filter(isRunning), 'processes of the tree still running').to.deep.equal([]);
        expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
      });
    });
  }
});

describe('a Ctrl-C of `acp-wire conduct` running codex-acp', function () {
  this.timeout(60_000);
  useBuild();
  let server: FakeModelServer;
  let home: TempHome;

  before(async () => {
    requireRealPeers();
    server = await startFakeModelServer();
    home = await makeTempHome('codex-ctrl-c');
    await writeCodexConfig(home, server.baseUrl);
  });

  after(async () => {
    for (const pid of processesWithHome(home)) process.kill(pid, 'SIGKILL'); // only if the test failed
    await server?.close();
    await home?.remove();
  });

  it('shuts the chain down and leaves no process of it behind', async () => {
    // A terminal's Ctrl-C goes to its foreground process group: here, a group of the conductor's own.
    const conductor = spawn(
      process.execPath,
      [CLI, 'conduct', commandLine('node', PASSTHROUGH_PROXY), commandLine('node', REAL_PEERS.codexAcp)],
      {
        cwd: ROOT,
        env: home.env({ OPENAI_API_KEY: 'sk-fake-key-for-a-local-server' }),
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      },
    );
    const exited = once(conductor, 'exit');
    const stdout = peerReader(conductor.stdout!, 'conductor stdout');
    const stderr = peerReader(conductor.stderr!, 'conductor stderr');
    conductor.stdin!.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n');
    await stdout.findText(/"id":1,"result":\{"protocolVersion":1/);
    const chain = descendants(conductor.pid!);
    expect(chain.length, 'proxy, launcher and binary').to.be.at.least(3);
    process.kill(-conductor.pid!, 'SIGINT');
    expect(await exited, stderr.text).to.deep.equal([130, null]);
    expect(chain.filter(isRunning), 'processes of the chain still running').to.deep.equal([]);
    expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
