/**
 * MCP tool calls of the real agents (codex-acp, claude-code-acp, claude-agent-acp), with no
 * internet: each agent's fake model (127.0.0.1) answers a prompt with a call of a tool of the test
 * MCP server (spec/fixtures/test-mcp-server.ts), declared in `session/new` both as a Streamable HTTP
 * server on 127.0.0.1 and as a stdio command. What each agent was measured to do is in
 * spec/helpers/tool-call-agents.ts and docs/real-peers.md ("Tool calls").
 */
import { expect } from 'chai';
import { AcpClient, spawnConnection, type ChildConnection } from '../../lib';
import { MCP_STDIO_RELAY, reciteResult, startTestMcpServer, type McpTransportName, type TestMcpServer } from '../fixtures/test-mcp-server';
import type { LineReader } from '../helpers/lines';
import { descendants, isRunning, processesEnded } from '../helpers/process-table';
import { useBuild } from '../helpers/processes';
import {
  makeTempHome,
  peerReader,
  processesWithHome,
  promptAndCollect,
  requireRealPeers,
  textOf,
  type TempHome,
} from '../helpers/real-peers';
import {
  TOOL_CALL_AGENTS,
  allowTools,
  mcpDeclarations,
  offeredToolNames,
  processesRunning,
  type FakeModel,
  type PermissionLog,
  type ToolCallAgent,
} from '../helpers/tool-call-agents';

const TRANSPORTS: readonly McpTransportName[] = ['http', 'stdio'];

describe('MCP tool calls of real agents (fake model, test MCP server over Streamable HTTP and stdio, all on 127.0.0.1)', function () {
  this.timeout(60_000);
  useBuild();
  for (const agent of TOOL_CALL_AGENTS) describe(agent.title, () => defineAgent(agent));
});

function defineAgent(agent: ToolCallAgent): void {
  let model: FakeModel;
  let mcp: TestMcpServer;
  let home: TempHome;
  let peer: ChildConnection | undefined;
  let stderr: LineReader;
  let client: AcpClient;
  let permissions: PermissionLog;

  before(async () => {
    requireRealPeers();
    model = await agent.startModel();
    mcp = await startTestMcpServer();
    home = await makeTempHome(agent.homePrefix);
    const env = await agent.environment(home, model);
    // The agents do not exit when their stdin ends: close() ends their process group.
    peer = spawnConnection(process.execPath, [agent.entry], { cwd: home.path, env, stderr: 'pipe', killTimeoutMs: 2000 });
    peerReader(peer.child.stdout!, `${agent.title} stdout`);
    stderr = peerReader(peer.child.stderr!, `${agent.title} stderr`);
    client = new AcpClient(peer.connection);
    permissions = allowTools(client, agent.allowOnceOptionId);
  });

  after(async () => {
    await peer?.close();
    for (const pid of processesWithHome(home)) process.kill(pid, 'SIGKILL'); // only if a test failed
    for (const pid of relays()) process.kill(pid, 'SIGKILL'); // only if a test failed
    await mcp?.close();
    await model?.close();
    await home?.remove();
  });

  /** The relays (stdio MCP servers) the agent started for this test's MCP server that still run. */
  const relays = (): number[] => (mcp ? processesRunning(MCP_STDIO_RELAY, mcp.stdioCommand.args[1]!) : []);

  /** A new session with the test MCP server declared twice: `probehttp` (http) and `probestdio` (stdio). */
  const newSession = async (): Promise<string> => {
    const { http, stdio } = mcpDeclarations(mcp);
    const { sessionId } = await client.newSession({ cwd: home.path, mcpServers: [http, stdio] });
    expect(sessionId, stderr.text).to.be.a('string').and.not.equal('');
    return sessionId;
  };

  it(`advertises mcpCapabilities ${JSON.stringify(agent.mcpCapabilities)} in initialize`, async () => {
    const answer = await client.initialize();
    expect(answer.protocolVersion).to.equal(1);
    expect((answer.capabilities as { mcpCapabilities?: unknown }).mcpCapabilities).to.deep.equal(agent.mcpCapabilities);
    if (agent.authMethod) expect(await client.authenticate(agent.authMethod)).to.deep.equal({});
  });

  it(`connects to both servers of session/new (MCP initialize ${agent.mcpInitialize.protocolVersion}, the HTTP header sent on every request) and offers their tools to the model as mcp__SERVER__TOOL`, async () => {
    const sessionId = await newSession();
    const { turn } = promptAndCollect(client, sessionId, 'Say hello');
    expect(await turn).to.include({ stopReason: 'end_turn' });
    for (const transport of TRANSPORTS) {
      const initialize = await mcp.messages.waitFor(
        `initialize over ${transport}`,
        (m) => m.transport === transport && m.message.method === 'initialize',
      );
      expect(initialize.message.params).to.deep.include({ protocolVersion: agent.mcpInitialize.protocolVersion });
      expect(initialize.message.params?.clientInfo).to.deep.include({ name: agent.mcpInitialize.clientName });
      await mcp.messages.waitFor(`tools/list over ${transport}`, (m) => m.transport === transport && m.message.method === 'tools/list');
    }
    const { name, value } = mcp.secretHeader;
    expect(mcp.httpRequests.filter((request) => request.headers[name] !== value)).to.deep.equal([]);
    expect(offeredToolNames(model.requests.at(-1))).to.include.members([
      'mcp__probehttp__recite',
      'mcp__probehttp__block',
      'mcp__probestdio__recite',
      'mcp__probestdio__block',
    ]);
  });

  for (const transport of TRANSPORTS) {
    it(`calls a tool over ${transport} once allowed in session/request_permission, sends its result to the model, and ends the turn end_turn with the final text`, async () => {
      const sessionId = await newSession();
      const word = `xylophone-${transport}`;
      const finalText = `The probe recited ${word}.`;
      const script = model.callTool({ tool: `probe${transport}__recite`, arguments: { word }, finalText });
      const { turn, updates } = promptAndCollect(client, sessionId, 'Recite a word with the probe');
      expect(await turn, stderr.text).to.include({ stopReason: 'end_turn' });
      expect(textOf(updates)).to.equal(finalText);
      const calls = mcp.calls.filter((call) => call.tool === 'recite' && call.arguments.word === word);
      expect(calls.map(({ transport, arguments: args }) => ({ transport, args }))).to.deep.equal([{ transport, args: { word } }]);
      expect((await script.result()).text).to.include(reciteResult(word));
      expect(model.toolErrors.items).to.deep.equal([]);
      const asked = permissions.requests.filter(
        (request) => (request.params.toolCall as { toolCallId?: unknown }).toolCallId === script.callId,
      );
      expect(asked, 'permission requests for the call').to.have.lengthOf(1);
      const options = asked[0]!.params.options as { optionId?: unknown; kind?: unknown }[];
      expect(options.find((option) => option.optionId === agent.allowOnceOptionId)).to.deep.include({ kind: 'allow_once' });
      expect(
        updates.filter((update) => update.sessionUpdate === 'tool_call').map((update) => (update as { toolCallId?: unknown }).toolCallId),
      ).to.include(script.callId);
    });
  }

  for (const transport of TRANSPORTS) {
    const outcome = agent.sendsCancelledNotification
      ? 'sends notifications/cancelled for the tools/call, which aborts the tool'
      : 'leaves the tools/call running (no notifications/cancelled, the HTTP stream or stdio connection kept open) through a next whole turn';
    it(`ends a turn cancelled by session/cancel while a tool blocks over ${transport}, and ${outcome}`, async () => {
      const sessionId = await newSession();
      const known = mcp.calls.items.length;
      model.callTool({ tool: `probe${transport}__block`, arguments: {}, finalText: 'Never sent.' });
      const { turn } = promptAndCollect(client, sessionId, 'Block with the probe');
      const call = await mcp.calls.waitFor(`block over ${transport}`, (c) => c.tool === 'block' && mcp.calls.items.indexOf(c) >= known);
      turn.cancel();
      expect(await turn, stderr.text).to.include({ stopReason: 'cancelled' });
      const isCancelOf = (m: (typeof mcp.messages.items)[number]): boolean =>
        m.connection === call.connection &&
        m.message.method === 'notifications/cancelled' &&
        m.message.params?.requestId === call.requestId;
      if (agent.sendsCancelledNotification) {
        await mcp.messages.waitFor(`notifications/cancelled for request ${call.requestId}`, isCancelOf);
        const aborted = await mcp.aborted.waitFor(
          'the aborted block call',
          (a) => a.connection === call.connection && a.requestId === call.requestId,
        );
        expect(aborted.cause).to.equal('cancelled');
        return;
      }
      // The same session goes on: a whole turn with another tool call ends normally meanwhile.
      const script = model.callTool({ tool: `probe${transport}__recite`, arguments: { word: 'after' }, finalText: 'Recited after.' });
      const next = promptAndCollect(client, sessionId, 'Recite after the cancel');
      expect(await next.turn).to.include({ stopReason: 'end_turn' });
      expect((await script.result()).text).to.include(reciteResult('after'));
      expect(mcp.messages.filter(isCancelOf)).to.deep.equal([]);
      expect(mcp.aborted.filter((a) => a.connection === call.connection)).to.deep.equal([]);
      expect(mcp.closed.items).not.to.include(call.connection);
      if (transport === 'http') {
        const post = mcp.httpRequests.filter(
          (r) => r.headers['mcp-session-id'] === call.sessionId && isRequest(r.body, 'tools/call', call.requestId),
        );
        expect(post.map((r) => r.end)).to.deep.equal(['open']);
      }
    });
  }

  it('leaves no process, relay or MCP connection behind once closed', async () => {
    const tree = [peer!.child.pid!, ...descendants(peer!.child.pid!)];
    const running = relays();
    expect(running, 'the stdio relays of the sessions').not.to.deep.equal([]);
    expect(tree).to.include.members(running);
    await peer!.close();
    // A relay ends when its stdin does. codex starts each stdio MCP server in a process group of its
    // own, which close() does not signal: those end once codex has gone, after close() resolves.
    await processesEnded(running);
    expect(tree.filter(isRunning), 'processes of the tree still running').to.deep.equal([]);
    expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
    expect(relays(), 'relays still running').to.deep.equal([]);
    const stdio = [...new Set(mcp.messages.filter((m) => m.transport === 'stdio').map((m) => m.connection))];
    for (const connection of stdio) await mcp.closed.waitFor(`${connection} closed`, (closed) => closed === connection);
    await mcp.close();
    const blocked = mcp.calls.filter((call) => call.tool === 'block');
    for (const call of blocked)
      await mcp.aborted.waitFor(
        `block ${call.connection} aborted`,
        (a) => a.connection === call.connection && a.requestId === call.requestId,
      );
  });
}

/** Whether an HTTP body is the JSON-RPC request `method` with id `id`. */
function isRequest(body: unknown, method: string, id: string | number): boolean {
  const message = body as { method?: unknown; id?: unknown } | undefined;
  return message?.method === method && message.id === id;
}
