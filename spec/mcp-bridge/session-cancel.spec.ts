/**
 * The bridge and the ACP session's life: each session gets its own route per declared server, and
 * a `session/cancel` (or `session/close`) that passes toward the agent cancels that session's MCP
 * requests in flight, and only that session's, whether or not the agent cancels them itself.
 */
import { expect } from 'chai';
import type { McpRequestContext } from '../../lib/mcp';
import type { WireMessage } from '../helpers/messages';
import { type BridgeChain, type HttpAnswer, REFUSED_CWD, callStarted, httpPost, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';

const ACP_TOOLS = { type: 'acp', name: 'tools', serverId: 'tools-1' };
const INITIALIZE = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } };
const CANCELLED = { code: -32800, message: 'Request cancelled' };

/** The bridged server as one session's agent sees it, with an MCP session opened on it. */
interface SessionRoute {
  readonly url: string;
  readonly headers: Record<string, string>;
}

/** A `tools/call` of `hang` tagged with `tag`, so that its handler's context can be told apart. */
function hang(id: number, tag: string): object {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hang', arguments: { text: tag } } };
}

function isHang(tag: string): (context: McpRequestContext) => boolean {
  return (context) => context.params?.name === 'hang' && (context.params.arguments as { text?: unknown }).text === tag;
}

function aborted(context: McpRequestContext): Promise<void> {
  if (context.signal.aborted) return Promise.resolve();
  return new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
}

describe('McpBridge and session/cancel', function () {
  this.timeout(20000);
  useBuild();

  let chain: BridgeChain;

  beforeEach(async () => {
    chain = startBridgeChain({ version: 1, transports: ['http'] });
    await chain.client.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
  });
  afterEach(() => chain.close());

  /** Opens an ACP session declaring the `tools` server; answers its id and the route it got (MCP session opened). */
  async function openSession(): Promise<{ sessionId: string; route: SessionRoute }> {
    const { sessionId } = (await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] })) as {
      sessionId: string;
    };
    const declared = chain.received['session/new'].at(-1)!.mcpServers as unknown as { url: string; headers: { value: string }[] }[];
    const { url } = declared[0]!;
    const authorization = declared[0]!.headers[0]!.value;
    const answer = await httpPost(url, INITIALIZE, { headers: { authorization } });
    return { sessionId, route: { url, headers: { authorization, 'mcp-session-id': String(answer.headers['mcp-session-id']) } } };
  }

  /** A request from the client to the agent and back through the bridge: what the bridge sent before is delivered. */
  async function roundTrip(): Promise<void> {
    await chain.client.left.sendRequest('session/resume', { sessionId: 'round-trip', cwd: '/', mcpServers: [] });
  }

  function post(route: SessionRoute, body: object): Promise<HttpAnswer> {
    return httpPost(route.url, body, { headers: route.headers });
  }

  function mcpMessageIdOf(context: McpRequestContext): unknown {
    const onHop = chain.hop.fromRight.matching(
      (m: WireMessage) => m.method === 'mcp/message' && (m.params as { requestId?: unknown }).requestId === context.requestId,
    );
    expect(onHop, `the mcp/message of ${context.requestId} on the bridge's hop`).to.have.lengthOf(1);
    return (JSON.parse(onHop[0]!) as WireMessage).id;
  }

  it('gives each session its own URL and secret for the same server', async () => {
    const first = await openSession();
    const second = await openSession();
    expect([first.sessionId, second.sessionId]).to.deep.equal(['s-1', 's-2']);
    expect(second.route.url).not.to.equal(first.route.url);
    expect(second.route.headers.authorization).not.to.equal(first.route.headers.authorization);
    const foreign = await httpPost(first.route.url, INITIALIZE, { headers: { authorization: second.route.headers.authorization! } });
    expect(foreign.status).to.equal(401);
  });

  it("forwards session/cancel unchanged and cancels that session's tools/call in flight: -32800 to the MCP client, the handler's signal aborted, one $/cancel_request on the bridge's hop", async () => {
    const { sessionId, route } = await openSession();
    const answer = post(route, hang(7, 'one'));
    const context = await callStarted(chain, isHang('one'));
    chain.client.left.sendNotification('session/cancel', { sessionId });
    expect(JSON.parse((await answer).body)).to.deep.equal({ jsonrpc: '2.0', id: 7, error: CANCELLED });
    await aborted(context);
    const cancel = await chain.hop.fromRight.take((m) => m.method === '$/cancel_request');
    expect(JSON.parse(cancel)).to.deep.equal({
      jsonrpc: '2.0',
      method: '$/cancel_request',
      params: { requestId: mcpMessageIdOf(context) },
    });
    expect(chain.received['session/cancel']).to.deep.equal([{ sessionId }]);
    expect(chain.hop.fromRight.matching((m) => m.method === '$/cancel_request')).to.have.lengthOf(1);
  });

  it("leaves another session's tools/call running, until that session is cancelled", async () => {
    const one = await openSession();
    const two = await openSession();
    const answers = [post(one.route, hang(7, 'one')), post(two.route, hang(7, 'two'))];
    const [first, second] = await Promise.all([callStarted(chain, isHang('one')), callStarted(chain, isHang('two'))]);
    chain.client.left.sendNotification('session/cancel', { sessionId: one.sessionId });
    expect(JSON.parse((await answers[0]!).body)).to.deep.include({ id: 7, error: CANCELLED });
    await aborted(first!);
    await roundTrip();
    expect(second!.signal.aborted, "the other session's call").to.equal(false);
    chain.client.left.sendNotification('session/cancel', { sessionId: two.sessionId });
    expect(JSON.parse((await answers[1]!).body)).to.deep.include({ id: 7, error: CANCELLED });
    await aborted(second!);
  });

  it('keeps the cancelled session usable: its MCP session answers a next tools/call', async () => {
    const { sessionId, route } = await openSession();
    const answer = post(route, hang(7, 'one'));
    await callStarted(chain, isHang('one'));
    chain.client.left.sendNotification('session/cancel', { sessionId });
    await answer;
    const echo = await post(route, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { text: 'again' } } });
    expect(JSON.parse(echo.body)).to.deep.equal({ jsonrpc: '2.0', id: 8, result: { content: [{ type: 'text', text: 'echo again' }] } });
  });

  it('cancels a stateless 2026-07-28 request of the session too', async () => {
    const { sessionId, route } = await openSession();
    const stateless = { authorization: route.headers.authorization!, 'mcp-protocol-version': '2026-07-28' };
    const answer = httpPost(route.url, hang(9, 'stateless'), { headers: stateless });
    const context = await callStarted(chain, isHang('stateless'));
    chain.client.left.sendNotification('session/cancel', { sessionId });
    expect(JSON.parse((await answer).body)).to.deep.equal({ jsonrpc: '2.0', id: 9, error: CANCELLED });
    await aborted(context);
  });

  it('forwards a session/cancel of a session it gave no server, and cancels nothing', async () => {
    const { route } = await openSession();
    const answer = post(route, hang(7, 'one'));
    const context = await callStarted(chain, isHang('one'));
    chain.client.left.sendNotification('session/cancel', { sessionId: 'elsewhere' });
    await roundTrip();
    expect(chain.received['session/cancel']).to.deep.equal([{ sessionId: 'elsewhere' }]);
    expect(context.signal.aborted).to.equal(false);
    chain.client.left.sendNotification('session/cancel', { sessionId: 's-1' });
    expect((await answer).status).to.equal(200);
  });

  it("gives a session/load of the session its own route again, and a session/cancel after it cancels that route's calls", async () => {
    const { sessionId, route } = await openSession();
    await chain.client.left.sendRequest('session/load', { sessionId, cwd: '/', mcpServers: [ACP_TOOLS] });
    const loaded = chain.received['session/load'][0]!.mcpServers as unknown as { url: string }[];
    expect(loaded[0]!.url).to.equal(route.url);
    const answer = post(route, hang(7, 'one'));
    await callStarted(chain, isHang('one'));
    chain.client.left.sendNotification('session/cancel', { sessionId });
    expect(JSON.parse((await answer).body)).to.deep.include({ error: CANCELLED });
  });

  it("cancels the session's calls on session/close, and once the agent answered, its URL is no server's (404)", async () => {
    const { sessionId, route } = await openSession();
    const answer = post(route, hang(7, 'one'));
    const context = await callStarted(chain, isHang('one'));
    expect(await chain.client.left.sendRequest('session/close', { sessionId })).to.deep.equal({});
    expect(JSON.parse((await answer).body)).to.deep.include({ error: CANCELLED });
    await aborted(context);
    expect(chain.received['session/close']).to.deep.equal([{ sessionId }]);
    expect((await post(route, { jsonrpc: '2.0', id: 8, method: 'tools/list' })).status).to.equal(404);
  });

  it('frees the route of a session/new the agent refused: its URL is no server’s (404)', async () => {
    const refused = chain.client.left.sendRequest('session/new', { cwd: REFUSED_CWD, mcpServers: [ACP_TOOLS] });
    await refused.then(
      () => expect.fail('session/new was answered'),
      () => undefined,
    );
    const declared = chain.received['session/new'][0]!.mcpServers as unknown as { url: string; headers: { value: string }[] }[];
    const authorization = declared[0]!.headers[0]!.value;
    expect((await httpPost(declared[0]!.url, INITIALIZE, { headers: { authorization } })).status).to.equal(404);
  });
});
