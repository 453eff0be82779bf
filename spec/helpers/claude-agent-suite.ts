/**
 * The suite shared by the two Claude agents (claude-code-acp and its successor claude-agent-acp):
 * whole ACP v1 turns against a fake Anthropic Messages API on 127.0.0.1, directly and through
 * `acp-wire conduct` with two passthrough proxies. Both agents start the Claude Code CLI (plain JS
 * in their npm package) as a child, which sends the turns to `ANTHROPIC_BASE_URL`.
 */
import { expect } from 'chai';
import { AcpClient, spawnConnection, type ChildConnection } from '../../lib';
import { claudeVariables } from '../../lib/check/model-stub';
import { HOLD_MARKER, startFakeAnthropicServer, type FakeAnthropicServer } from '../../lib/check/fake-models/anthropic-messages';
import type { LineReader } from './lines';
import { descendants, isRunning } from './process-table';
import { CLI, PASSTHROUGH_PROXY, useBuild } from './processes';
import {
  commandLine,
  makeTempHome,
  peerReader,
  processesWithHome,
  promptAndCollect,
  requireRealPeers,
  textOf,
  type TempHome,
} from './real-peers';

/** One Claude agent under test. */
export interface ClaudeAgent {
  /** The suite's title. */
  readonly title: string;
  /** The agent's entry script (from `REAL_PEERS`). */
  readonly entry: string;
  /** A prefix for its throwaway `$HOME`. */
  readonly homePrefix: string;
}

/**
 * The environment of a Claude agent: `$HOME` in `home`, the model at `baseUrl`, a fake key, no
 * traffic besides the model's. `IS_SANDBOX` is left out ({@link makeTempHome} drops it): set to
 * anything but `1`, it makes the agent pass `--dangerously-skip-permissions`, which the CLI refuses
 * as root, and every `session/new` fails.
 */
export function claudeEnv(home: TempHome, baseUrl: string): NodeJS.ProcessEnv {
  return home.env(claudeVariables(baseUrl));
}

/** Defines the suite for `agent`: for each route, initialize, session/new, a whole turn, a cancelled one, no process left. */
export function describeClaudeAgent(agent: ClaudeAgent): void {
  describe(agent.title, function () {
    this.timeout(60_000);
    useBuild();
    const routes = [
      { name: 'directly', argv: [process.execPath, agent.entry] },
      {
        name: 'through `acp-wire conduct` with two passthrough proxies',
        argv: [
          process.execPath,
          CLI,
          'conduct',
          commandLine('node', PASSTHROUGH_PROXY),
          commandLine('node', PASSTHROUGH_PROXY),
          commandLine('node', agent.entry),
        ],
      },
    ];
    for (const route of routes) describe(route.name, () => defineRoute(agent, route.argv));
  });
}

function defineRoute(agent: ClaudeAgent, argv: readonly string[]): void {
  let server: FakeAnthropicServer;
  let home: TempHome;
  let peer: ChildConnection | undefined;
  let stderr: LineReader;
  let client: AcpClient;
  let sessionId: string;

  before(async () => {
    requireRealPeers();
    server = await startFakeAnthropicServer();
    home = await makeTempHome(agent.homePrefix);
    const [command, ...args] = argv;
    // The agent does not exit when its stdin ends (its CLI child keeps it alive): close() ends the group.
    peer = spawnConnection(command!, args, { cwd: home.path, env: claudeEnv(home, server.baseUrl), stderr: 'pipe', killTimeoutMs: 2000 });
    peerReader(peer.child.stdout!, `${agent.title} stdout`);
    stderr = peerReader(peer.child.stderr!, `${agent.title} stderr`);
    client = new AcpClient(peer.connection);
  });

  after(async () => {
    await peer?.close();
    for (const pid of processesWithHome(home)) process.kill(pid, 'SIGKILL'); // only if a test failed
    await server?.close();
    await home?.remove();
  });

  it('negotiates ACP v1 when offered v2', async () => {
    const answer = await client.initialize();
    expect(answer.protocolVersion).to.equal(1);
    expect(client.protocolVersion).to.equal(1);
  });

  it('opens a session', async () => {
    ({ sessionId } = await client.newSession({ cwd: home.path }));
    expect(sessionId, stderr.text).to.be.a('string').and.not.equal('');
  });

  it("streams a prompt to the end: the model's words as agent_message_chunk updates, then end_turn", async () => {
    const { turn, updates } = promptAndCollect(client, sessionId, 'Say hello');
    expect(await turn).to.include({ version: 1, stopReason: 'end_turn' });
    expect(textOf(updates)).to.equal(server.reply);
    const turns = server.requests.filter((request) => request.method === 'POST' && request.path.startsWith('/v1/messages'));
    expect(JSON.stringify(turns.at(-1)?.body)).to.include('Say hello');
  });

  it('ends a turn cancelled by session/cancel mid-stream with stopReason cancelled, and hangs up on the model', async () => {
    // A new session: after a cancel, claude-agent-acp's next prompt in the same session ends at once.
    const { sessionId: fresh } = await client.newSession({ cwd: home.path });
    const { turn, updates, firstText } = promptAndCollect(client, fresh, `Say hello slowly ${HOLD_MARKER}`);
    const held = await server.nextHeldTurn();
    await firstText;
    turn.cancel();
    expect(await turn).to.include({ version: 1, stopReason: 'cancelled' });
    await held.disconnected;
    expect(textOf(updates)).not.to.equal(server.reply);
  });

  it('leaves no process behind once closed', async () => {
    const tree = [peer!.child.pid!, ...descendants(peer!.child.pid!)];
    expect(tree.length, `the running tree: ${tree.join(' ')}`).to.be.at.least(2);
    await peer!.close();
    expect(tree.filter(isRunning), 'processes of the tree still running').to.deep.equal([]);
    expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
  });
}
