/**
 * The bridge carrying revision 2026-07-28's `input_required` results to a 2025-revision client,
 * driven over raw HTTP against a hand-written provider: the retry it sends, and every way a round
 * ends without one (no event stream, a request it cannot carry, a cancel, too many rounds), and a
 * stateless request that gets the result as it is.
 */
import { expect } from 'chai';
import { MCP_PROTOCOL_VERSION, type McpOutcome, type McpRequestContext } from '../../lib/mcp';
import { type BridgeChain, httpDeclarationOf, httpPost, openPost, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';

const ELICIT = { method: 'elicitation/create', params: { message: 'Who?', requestedSchema: { type: 'object', properties: {} } } };

/** The `asking` server (tools/call only, each call recorded): `ask` wants an elicitation once, `loop` input for ever, `odd` a request nobody carries. */
function askingHandler(calls: McpRequestContext[]) {
  return (context: McpRequestContext): McpOutcome => {
    if (context.method !== 'tools/call') return { error: { code: -32601, message: `Method not found: ${context.method}` } };
    calls.push(context);
    const params = context.params ?? {};
    if (params.name === 'loop') return { result: { resultType: 'input_required', requestState: 'again' } };
    if (params.name === 'odd')
      return { result: { resultType: 'input_required', inputRequests: { task: { method: 'tasks/get', params: {} } } } };
    if (params.inputResponses === undefined) {
      return { result: { resultType: 'input_required', inputRequests: { who: ELICIT }, requestState: 'state-1' } };
    }
    const text = JSON.stringify({ inputResponses: params.inputResponses, requestState: params.requestState });
    return { result: { content: [{ type: 'text', text }] } };
  };
}

describe('McpBridge carrying input_required to a 2025-revision client', function () {
  this.timeout(20000);
  useBuild();

  let chain: BridgeChain;
  let calls: McpRequestContext[];
  let url: string;
  let authorization: string;

  beforeEach(async () => {
    chain = startBridgeChain({ version: 1, transports: ['http'] });
    calls = [];
    const asking = chain.provider.register({ name: 'asking', serverId: 'asking-1', handler: askingHandler(calls) });
    await chain.client.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
    await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [asking.declaration] });
    ({ url, authorization } = httpDeclarationOf(chain.received));
  });
  afterEach(() => chain.close());

  async function openSession(): Promise<Record<string, string>> {
    const initialize = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } },
    };
    const answer = await httpPost(url, initialize, { headers: { authorization } });
    return { authorization, 'mcp-session-id': String(answer.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
  }

  function call(id: number, name: string): unknown {
    return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } };
  }

  it("sends the request again with the client's answer as inputResponses and the server's requestState, as a new mcp/message", async () => {
    const headers = await openSession();
    const post = openPost(url, call(1, 'ask'), headers);
    const asked = (await post.next()) as { id: string; method: string; params: unknown };
    expect(asked).to.deep.include({ jsonrpc: '2.0', method: 'elicitation/create', params: ELICIT.params });
    const answer = { jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { name: 'ada' } } };
    expect((await httpPost(url, answer, { headers })).status).to.equal(202);
    const text = JSON.stringify({ inputResponses: { who: answer.result }, requestState: 'state-1' });
    expect(await post.next()).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } });
    expect(await post.next()).to.equal(undefined);
    expect(calls).to.have.lengthOf(2);
    expect(calls[1]!.requestId).to.not.equal(calls[0]!.requestId);
    expect(calls[1]!.params).to.deep.include({ name: 'ask', arguments: {} });
  });

  it('answers an MCP error naming the input request when the request did not accept text/event-stream', async () => {
    const headers = await openSession();
    const answer = await httpPost(url, call(2, 'ask'), { headers: { ...headers, accept: 'application/json' } });
    const { error } = JSON.parse(answer.body) as { error: { code: number; message: string; data: unknown } };
    expect(error.code).to.equal(-32603);
    expect(error.message).to.equal(
      'MCP server "asking" over ACP: the server needs elicitation/create from the client (input "who"), which the bridge sends on the request\'s event stream: the request did not accept text/event-stream',
    );
    expect(error.data).to.deep.equal({ inputRequest: 'who', method: 'elicitation/create' });
  });

  it('answers an MCP error naming a request it cannot carry (neither elicitation, sampling nor roots)', async () => {
    const headers = await openSession();
    const { error } = JSON.parse((await httpPost(url, call(3, 'odd'), { headers })).body) as { error: { message: string } };
    expect(error.message).to.include('tasks/get').and.include('elicitation/create, sampling/createMessage, roots/list');
  });

  it('answers -32800 to a request cancelled while its client is asked, and takes a late answer without sending anything on', async () => {
    const headers = await openSession();
    const post = openPost(url, call(4, 'ask'), headers);
    const asked = (await post.next()) as { id: string };
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4 } };
    expect((await httpPost(url, cancel, { headers })).status).to.equal(202);
    expect(await post.next()).to.deep.equal({ jsonrpc: '2.0', id: 4, error: { code: -32800, message: 'Request cancelled' } });
    const late = { jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: {} } };
    expect((await httpPost(url, late, { headers })).status).to.equal(202);
    const ping = await httpPost(url, { jsonrpc: '2.0', id: 5, method: 'ping' }, { headers });
    expect(JSON.parse(ping.body)).to.deep.equal({ jsonrpc: '2.0', id: 5, result: {} });
    expect(calls).to.have.lengthOf(1);
  });

  it('gives up with an MCP error after 8 rounds that still ask for input', async () => {
    const headers = await openSession();
    const { error } = JSON.parse((await httpPost(url, call(6, 'loop'), { headers })).body) as { error: { message: string } };
    expect(error.message).to.equal('MCP server "asking" over ACP: the server still asked for input after 8 rounds');
    expect(calls).to.have.lengthOf(9);
    expect(calls.slice(1).map((context) => context.params?.requestState)).to.deep.equal(Array(8).fill('again'));
  });

  it('gives a stateless 2026-07-28 request its input_required result as it is (its client does the rounds)', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };
    const request = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: meta } };
    const answer = await httpPost(url, request, { headers: { authorization, 'mcp-protocol-version': MCP_PROTOCOL_VERSION } });
    expect(JSON.parse(answer.body)).to.deep.equal({
      jsonrpc: '2.0',
      id: 7,
      result: { resultType: 'input_required', inputRequests: { who: ELICIT }, requestState: 'state-1' },
    });
  });
});
