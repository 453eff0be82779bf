/**
 * The suite each current agent (spec/helpers/current-agents.ts) runs, over three routes: directly;
 * `acp-wire conduct --mcp-bridge "<tool proxy>" "<agent>"`; and the same with two passthrough
 * proxies between the tool proxy and the agent. On each: `initialize` offering v2, a whole turn
 * against the fake model, a turn cancelled by `session/cancel`, and once closed, no process of the
 * route left. Through the conductor also: a tool of the tool proxy (spec/fixtures/chain-tool-proxy.ts,
 * declared `{type:"acp"}`, given to the agent as `http` by the bridge) called by the model, and a
 * `session/cancel` while that tool runs, which aborts the tool's signal.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { AcpClient, spawnConnection, type ChildConnection } from '../../lib';
import { HOLD_MARKER, type FakeModelBackend } from '../../lib/check/fake-models/host';
import { CHAIN_TOOL_SERVER, chainReciteText } from '../fixtures/chain-tool-proxy';
import { TOOL_PROXY, bridgedUrls, isListening, isToolEvent } from './chain-tools';
import { agentTitle, type CurrentAgent } from './current-agents';
import type { LineReader } from './lines';
import { descendants, isRunning, processesEnded } from './process-table';
import { CLI, PASSTHROUGH_PROXY, ROOT, useBuild } from './processes';
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
import { offeredToolNames } from './tool-call-agents';

/** One way to reach the agent. */
interface Route {
  readonly name: string;
  /** The program and arguments the spec starts. */
  argv(agent: CurrentAgent, tracePath: string): string[];
  /** Whether the route has the tool proxy and the bridge. */
  readonly hasTools: boolean;
  /** The fewest processes of the route's tree while it runs (the agent counts one). */
  readonly treeSize: number;
}

function conduct(agent: CurrentAgent, tracePath: string, passthroughs: number): string[] {
  const proxies = Array.from({ length: passthroughs }, () => commandLine('node', PASSTHROUGH_PROXY));
  return [process.execPath, CLI, 'conduct', '--mcp-bridge', '--trace-file', tracePath, TOOL_PROXY, ...proxies, commandLine(...agent.argv)];
}

const ROUTES: readonly Route[] = [
  { name: 'directly', argv: (agent) => [...agent.argv], hasTools: false, treeSize: 2 },
  {
    name: 'through `acp-wire conduct --mcp-bridge` with a tool proxy',
    argv: (agent, tracePath) => conduct(agent, tracePath, 0),
    hasTools: true,
    treeSize: 3,
  },
  {
    name: 'through `acp-wire conduct --mcp-bridge` with a tool proxy and two passthrough proxies',
    argv: (agent, tracePath) => conduct(agent, tracePath, 2),
    hasTools: true,
    treeSize: 5,
  },
];

/** What a route's tests share. */
interface RouteState {
  model: FakeModelBackend;
  home: TempHome;
  peer: ChildConnection;
  stderr: LineReader;
  client: AcpClient;
  tracePath: string;
  /** Every `session/request_permission` the agent sent, answered with the agent's allow-once option. */
  permissions: { toolCallId: unknown }[];
}

/** Defines the suite for `agent`. */
export function describeCurrentAgent(agent: CurrentAgent): void {
  describe(`${agentTitle(agent)} (real agent) with a fake model on 127.0.0.1`, function () {
    this.timeout(60_000);
    useBuild();
    for (const route of ROUTES) describe(route.name, () => defineRoute(agent, route));
  });
}

/** The route's fake model, home, process and client, started before its tests and ended after them. */
function useRoute(agent: CurrentAgent, route: Route): RouteState {
  const state = {} as RouteState;
  before(async () => {
    requireRealPeers();
    state.model = await agent.startModel();
    state.home = await makeTempHome(agent.homePrefix);
    state.tracePath = join(state.home.path, 'conductor.trace.jsons');
    const env = { ...(await agent.environment(state.home, state.model)), TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') };
    const [command, ...args] = route.argv(agent, state.tracePath);
    // Some agents do not exit when their stdin ends: close() ends the process group.
    state.peer = spawnConnection(command!, args, { cwd: state.home.path, env, stderr: 'pipe', killTimeoutMs: 5000 });
    peerReader(state.peer.child.stdout!, `${route.name} stdout`);
    state.stderr = peerReader(state.peer.child.stderr!, `${route.name} stderr`);
    state.client = new AcpClient(state.peer.connection);
    state.permissions = answerPermissions(state.client, agent);
  });

  after(async () => {
    await state.peer?.close();
    if (state.home) for (const pid of processesWithHome(state.home)) process.kill(pid, 'SIGKILL'); // only if a test failed
    await state.model?.close();
    await state.home?.remove();
  });
  return state;
}

function defineRoute(agent: CurrentAgent, route: Route): void {
  const state = useRoute(agent, route);

  const acp = route.hasTools ? ', `acp` MCP servers added by the bridge' : '';
  it(`negotiates ACP v${agent.protocolVersion} when offered v2${acp}`, async () => {
    const answer = await state.client.initialize();
    expect(answer.protocolVersion).to.equal(agent.protocolVersion);
    expect(state.client.protocolVersion).to.equal(agent.protocolVersion);
    expect(acpAdvertised(answer.capabilities, agent.protocolVersion)).to.equal(route.hasTools);
  });

  it("streams a prompt to the end: the model's words as agent_message_chunk updates, then end_turn", async () => {
    const sessionId = await newSession(state);
    const { turn, updates } = promptAndCollect(state.client, sessionId, 'Say hello');
    expect(await turn, state.stderr.text).to.include({ stopReason: 'end_turn' });
    expect(textOf(updates)).to.equal(state.model.reply);
    const turns = state.model.requests.filter((request) => request.method === 'POST' && request.path.startsWith(agent.modelPath));
    expect(JSON.stringify(turns.at(-1)?.body)).to.include('Say hello');
  });

  it('ends a turn cancelled by session/cancel mid-stream with stopReason cancelled, and hangs up on the model', async () => {
    const sessionId = await newSession(state);
    const { turn, updates, firstText } = promptAndCollect(state.client, sessionId, `Say hello slowly ${HOLD_MARKER}`);
    const held = await state.model.nextHeldTurn();
    await firstText;
    turn.cancel();
    expect(await turn, state.stderr.text).to.include({ stopReason: 'cancelled' });
    await held.disconnected;
    expect(textOf(updates)).not.to.equal(state.model.reply);
  });

  if (route.hasTools) defineToolTests(agent, state);

  it('leaves no process behind once closed, and no bridge endpoint listening', async () => {
    const pid = state.peer.child.pid!;
    const tree = [pid, ...descendants(pid)];
    const urls = route.hasTools ? bridgedUrls(state.tracePath) : [];
    expect(tree.length, `the running tree: ${tree.join(' ')}`).to.be.at.least(route.treeSize);
    await state.peer.close();
    await processesEnded(tree);
    expect(tree.filter(isRunning), 'processes of the tree still running').to.deep.equal([]);
    expect(processesWithHome(state.home), 'processes started with this HOME still running').to.deep.equal([]);
    for (const url of urls) expect(await isListening(url), `${url} still listening`).to.equal(false);
  });
}

function defineToolTests(agent: CurrentAgent, state: RouteState): void {
  const asked = agent.allowOnceOptionId ? 'allowed once in session/request_permission' : 'without a session/request_permission';
  it(`calls the proxy's tool recite (${asked}): its result reaches the model and the turn ends end_turn with the final text`, async () => {
    const sessionId = await newSessionWithTools(state);
    const word = 'marimba-through-the-chain';
    const finalText = `The chain tool recited ${word}.`;
    const script = state.model.callTool({ tool: `${CHAIN_TOOL_SERVER}__recite`, arguments: { word }, finalText });
    const { turn, updates } = promptAndCollect(state.client, sessionId, 'Recite a word with the chain tool');
    expect(await turn, state.stderr.text).to.include({ stopReason: 'end_turn' });
    expect(textOf(updates)).to.equal(finalText);
    const offering = state.model.requests.find((request) => offeredToolNames(request).some((name) => name.includes(CHAIN_TOOL_SERVER)));
    expect(offeredToolNames(offering)).to.include.members([`mcp__${CHAIN_TOOL_SERVER}__recite`, `mcp__${CHAIN_TOOL_SERVER}__block`]);
    const called = await state.stderr.findMessage(isToolEvent('called', 'recite'));
    expect((called as { arguments?: unknown }).arguments).to.deep.equal({ word });
    expect((await script.result()).text).to.include(chainReciteText(word));
    expect(state.model.toolErrors.items).to.deep.equal([]);
    const permissions = state.permissions.filter((request) => request.toolCallId === script.callId);
    expect(permissions, 'permission requests for the call').to.have.lengthOf(agent.allowOnceOptionId ? 1 : 0);
  });

  it('ends a turn cancelled by session/cancel while the tool block runs, and the tool proxy sees the tool handler aborted', async () => {
    const sessionId = await newSessionWithTools(state);
    state.model.callTool({ tool: `${CHAIN_TOOL_SERVER}__block`, arguments: {}, finalText: 'Never sent.' });
    const { turn } = promptAndCollect(state.client, sessionId, 'Block with the chain tool');
    await state.stderr.take(isToolEvent('called', 'block'));
    turn.cancel();
    expect(await turn, state.stderr.text).to.include({ stopReason: 'cancelled' });
    await state.stderr.take(isToolEvent('aborted', 'block'));
  });
}

/** Whether an `initialize` answer's capabilities say the agent takes `acp` MCP servers (v1 `mcpCapabilities.acp`, v2 `session.mcp.acp`). */
function acpAdvertised(capabilities: unknown, version: 1 | 2): boolean {
  if (version === 1) return (capabilities as { mcpCapabilities?: { acp?: unknown } }).mcpCapabilities?.acp === true;
  return (capabilities as { session?: { mcp?: { acp?: unknown } } }).session?.mcp?.acp !== undefined;
}

/** Answers every `session/request_permission` with the agent's allow-once option, and records it. */
function answerPermissions(client: AcpClient, agent: CurrentAgent): { toolCallId: unknown }[] {
  const asked: { toolCallId: unknown }[] = [];
  client.handle({
    requestPermission: (params) => {
      const toolCall = (params as { toolCall?: { toolCallId?: unknown }; subject?: { toolCall?: { toolCallId?: unknown } } }) ?? {};
      asked.push({ toolCallId: toolCall.toolCall?.toolCallId ?? toolCall.subject?.toolCall?.toolCallId });
      const optionId = agent.allowOnceOptionId;
      return optionId ? { outcome: { outcome: 'selected', optionId } } : { outcome: { outcome: 'cancelled' } };
    },
  });
  return asked;
}

async function newSession(state: RouteState): Promise<string> {
  const { sessionId } = await state.client.newSession({ cwd: state.home.path, mcpServers: [] });
  expect(sessionId, state.stderr.text).to.be.a('string').and.not.equal('');
  return sessionId;
}

/**
 * A new session whose MCP client has listed the tool proxy's tools: an agent that connects to its
 * MCP servers in the background (qwen) offers the model only the tools it has listed.
 */
async function newSessionWithTools(state: RouteState): Promise<string> {
  const listed = state.stderr.messages.filter(isToolEvent('listed')).length;
  const sessionId = await newSession(state);
  await state.stderr.findMessage((message) => isToolEvent('listed')(message) && (message as { count?: number }).count! > listed);
  return sessionId;
}
