/**
 * Real agents (codex-acp, claude-code-acp, claude-agent-acp) call a proxy's tool through the
 * conductor: `acp-wire conduct --mcp-bridge "<tool proxy>" "<agent>"`. The tool proxy
 * (spec/fixtures/chain-tool-proxy.ts, a separate process) provides an MCP server over ACP and
 * declares it `{type:"acp"}` in `session/new`; the bridge, in the conductor's process just before
 * the agent, gives it to the agent as an `http` server on 127.0.0.1. The client (this spec) declares
 * no MCP server. Each agent's fake model (127.0.0.1) scripts the call. What each agent did is in
 * docs/real-peers.md ("Tool calls through the conductor").
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { AcpClient, RpcError, spawnConnection, type ChildConnection } from '../../lib';
import { CHAIN_TOOL_SERVER, chainReciteText } from '../fixtures/chain-tool-proxy';
import { TOOL_PROXY, bridgedUrls, isListening, isToolEvent } from '../helpers/chain-tools';
import type { LineReader } from '../helpers/lines';
import { descendants, isRunning, processesEnded } from '../helpers/process-table';
import { CLI, ROOT, useBuild } from '../helpers/processes';
import {
  commandLine,
  makeTempHome,
  peerReader,
  processesWithHome,
  promptAndCollect,
  requireRealPeers,
  textOf,
  type TempHome,
} from '../helpers/real-peers';
import { TOOL_CALL_AGENTS, allowTools, offeredToolNames, type FakeModel, type ToolCallAgent } from '../helpers/tool-call-agents';

/** A conductor running the tool proxy, the bridge and the agent, with this spec as its client. */
interface Chain {
  readonly conductor: ChildConnection;
  readonly client: AcpClient;
  readonly stderr: LineReader;
  readonly permissions: ReturnType<typeof allowTools>;
  readonly tracePath: string;
}

describe('Real agents call a proxy tool through acp-wire conduct --mcp-bridge (fake model, tool proxy over ACP, all on 127.0.0.1)', function () {
  this.timeout(60_000);
  useBuild();
  for (const agent of TOOL_CALL_AGENTS) describe(agent.title, () => defineAgent(agent));
});

function defineAgent(agent: ToolCallAgent): void {
  let model: FakeModel;
  let home: TempHome;
  let env: NodeJS.ProcessEnv;
  let chain: Chain | undefined;

  before(async () => {
    requireRealPeers();
    model = await agent.startModel();
    home = await makeTempHome(`${agent.homePrefix}-chain`);
    env = await agent.environment(home, model);
  });

  after(async () => {
    await chain?.conductor.close();
    for (const pid of processesWithHome(home)) process.kill(pid, 'SIGKILL'); // only if a test failed
    await model?.close();
    await home?.remove();
  });

  /** Starts a chain and initializes it (authenticating when the agent needs it). */
  async function startChain(name: string): Promise<Chain> {
    const tracePath = join(home.path, `${name}.trace.jsons`);
    const agentCommand = commandLine(process.execPath, agent.entry);
    const conductor = spawnConnection(
      process.execPath,
      [CLI, 'conduct', '--mcp-bridge', '--trace-file', tracePath, TOOL_PROXY, agentCommand],
      { cwd: home.path, env: { ...env, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') }, stderr: 'pipe', killTimeoutMs: 10_000 },
    );
    peerReader(conductor.child.stdout!, `${agent.title} conductor stdout`);
    const stderr = peerReader(conductor.child.stderr!, `${agent.title} conductor stderr`);
    const client = new AcpClient(conductor.connection);
    const permissions = allowTools(client, agent.allowOnceOptionId);
    chain = { conductor, client, stderr, permissions, tracePath };
    const answer = await client.initialize();
    expect((answer.capabilities as { mcpCapabilities?: { acp?: unknown } }).mcpCapabilities?.acp, 'acp advertised by the bridge').to.equal(
      true,
    );
    if (agent.authMethod) await client.authenticate(agent.authMethod);
    return chain;
  }

  async function newSession(c: Chain): Promise<string> {
    const { sessionId } = await c.client.newSession({ cwd: home.path, mcpServers: [] });
    expect(sessionId, c.stderr.text).to.be.a('string').and.not.equal('');
    return sessionId;
  }

  /** Closes a chain's conductor and checks that nothing it started runs, and its bridge no longer listens. */
  async function closeAndCheck(c: Chain): Promise<void> {
    const pid = c.conductor.child.pid!;
    const tree = [pid, ...descendants(pid)];
    const urls = bridgedUrls(c.tracePath);
    await c.conductor.close();
    await processesEnded(tree);
    expect(tree.filter(isRunning), 'processes of the chain still running').to.deep.equal([]);
    expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
    for (const url of urls) expect(await isListening(url), `${url} still listening`).to.equal(false);
    chain = undefined;
  }

  it("calls the proxy's tool recite, given to it as http by the bridge (the client declares none), once allowed; its result reaches the model and the turn ends end_turn with the final text", async () => {
    const c = await startChain('main');
    await c.stderr.findMessage(isToolEvent('started'));
    const sessionId = await newSession(c);
    const urls = bridgedUrls(c.tracePath);
    expect(urls, 'the http declaration the agent got').to.have.lengthOf(1);
    const word = 'marimba-through-the-chain';
    const finalText = `The chain tool recited ${word}.`;
    const script = model.callTool({ tool: `${CHAIN_TOOL_SERVER}__recite`, arguments: { word }, finalText });
    const { turn, updates } = promptAndCollect(c.client, sessionId, 'Recite a word with the chain tool');
    expect(await turn, c.stderr.text).to.include({ stopReason: 'end_turn' });
    expect(textOf(updates)).to.equal(finalText);
    expect(offeredToolNames(model.requests.find((r) => offeredToolNames(r).some((n) => n.includes(CHAIN_TOOL_SERVER))))).to.include.members(
      [`mcp__${CHAIN_TOOL_SERVER}__recite`, `mcp__${CHAIN_TOOL_SERVER}__block`],
    );
    const called = await c.stderr.findMessage(isToolEvent('called', 'recite'));
    expect((called as { arguments?: unknown }).arguments).to.deep.equal({ word });
    expect((await script.result()).text).to.include(chainReciteText(word));
    expect(model.toolErrors.items).to.deep.equal([]);
    const asked = c.permissions.requests.filter((r) => (r.params.toolCall as { toolCallId?: unknown }).toolCallId === script.callId);
    expect(asked, 'permission requests for the call').to.have.lengthOf(1);
  });

  const afterCancel = agent.sendsCancelledNotification
    ? ''
    : ' (the agent sends no notifications/cancelled: the bridge cancels the call), and the next turn of the session calls recite';
  it(`ends a turn cancelled by session/cancel while the tool block runs, and the proxy sees its tool handler aborted${afterCancel}`, async () => {
    const c = chain!;
    const sessionId = await newSession(c);
    model.callTool({ tool: `${CHAIN_TOOL_SERVER}__block`, arguments: {}, finalText: 'Never sent.' });
    const { turn } = promptAndCollect(c.client, sessionId, 'Block with the chain tool');
    await c.stderr.take(isToolEvent('called', 'block'));
    turn.cancel();
    expect(await turn, c.stderr.text).to.include({ stopReason: 'cancelled' });
    await c.stderr.take(isToolEvent('aborted', 'block'));
    if (agent.sendsCancelledNotification) return;
    // The agent left its MCP request running; the bridge ended it. The same session goes on.
    const script = model.callTool({ tool: `${CHAIN_TOOL_SERVER}__recite`, arguments: { word: 'after' }, finalText: 'Recited after.' });
    const next = promptAndCollect(c.client, sessionId, 'Recite after the cancel');
    expect(await next.turn, c.stderr.text).to.include({ stopReason: 'end_turn' });
    expect(textOf(next.updates)).to.equal('Recited after.');
    expect((await script.result()).text).to.include(chainReciteText('after'));
  });

  it('leaves no process (agent tree, conductor, tool proxy) and no listening bridge endpoint once the client closes', async () => {
    await closeAndCheck(chain!);
  });

  it('when the tool proxy is killed while block runs: the prompt is answered -32603 incoming_transport_closed, the conductor names the proxy, shuts the chain down and exits 1, and nothing is left', async () => {
    const c = await startChain('fault');
    const started = (await c.stderr.findMessage(isToolEvent('started'))) as { pid?: unknown };
    const sessionId = await newSession(c);
    model.callTool({ tool: `${CHAIN_TOOL_SERVER}__block`, arguments: {}, finalText: 'Never sent.' });
    const { turn } = promptAndCollect(c.client, sessionId, 'Block with the chain tool');
    await c.stderr.take(isToolEvent('called', 'block'));
    const pid = c.conductor.child.pid!;
    const tree = [pid, ...descendants(pid)];
    const urls = bridgedUrls(c.tracePath);
    expect(tree).to.include(started.pid);
    process.kill(started.pid as number, 'SIGKILL');
    const failure = await turn.then(
      (end) => expect.fail(`the turn ended ${JSON.stringify(end)}`),
      (error: unknown) => error,
    );
    expect(failure).to.be.instanceOf(RpcError);
    expect(failure).to.deep.include({ code: -32603, data: { reason: 'incoming_transport_closed', method: 'session/prompt' } });
    expect(await c.conductor.exited).to.deep.include({ code: 1 });
    await c.stderr.find((_message, line) =>
      /^acp-wire conduct: proxy1 \(.*chain-tool-proxy\.ts\) was killed by SIGKILL; the chain was shut down$/.test(line),
    );
    await processesEnded(tree);
    expect(tree.filter(isRunning), 'processes of the chain still running').to.deep.equal([]);
    expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
    for (const url of urls) expect(await isListening(url), `${url} still listening`).to.equal(false);
    chain = undefined;
  });
}
