/**
 * Providing MCP servers over ACP (`McpProvider`) and calling them (`McpCaller`), one hop: the
 * binding's outcomes, its error codes, notifications and cancellation.
 */
import { expect } from 'chai';
import {
  MCP_PROTOCOL_VERSION,
  McpBindingErrorCode,
  McpCaller,
  McpProtocolError,
  McpProvider,
  McpServerIdTakenError,
  type McpNotification,
  type McpRequestContext,
} from '../../lib/mcp';
import { RpcError } from '../../lib';
import { rejectionOf, deferred } from '../helpers/async';
import { tappedPair, type TappedPair } from '../helpers/peers';

const META = { 'io.modelcontextprotocol/protocolVersion': MCP_PROTOCOL_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };

describe('MCP servers provided over ACP, one hop (agent ⇄ client)', () => {
  let hop: TappedPair;
  let provider: McpProvider;
  let caller: McpCaller;

  beforeEach(() => {
    // left: the agent (the caller); right: the client (the provider).
    hop = tappedPair();
    provider = new McpProvider();
    provider.serve(hop.right);
    caller = new McpCaller(hop.left, { clientInfo: { name: 'spec-agent', version: '1.0.0' } });
    caller.listen(hop.left);
  });
  afterEach(() => hop.close());

  it('answers a tools/call with the handler result in the carrier, and the request carries the 2026-07-28 _meta', async () => {
    let seen: McpRequestContext | undefined;
    const tools = provider.register({
      name: 'tools',
      serverId: 'srv-1',
      handler: (context) => {
        seen = context;
        return { result: { content: [{ type: 'text', text: `echo ${String((context.params!.arguments as { text: string }).text)}` }] } };
      },
    });
    const outcome = await caller.request(tools.serverId, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, { requestId: 'r-1' });
    expect(outcome).to.deep.equal({ result: { content: [{ type: 'text', text: 'echo hi' }] } });
    expect(seen).to.deep.include({ serverId: 'srv-1', requestId: 'r-1', method: 'tools/call', protocolVersion: MCP_PROTOCOL_VERSION });
    expect(seen!.clientInfo).to.deep.equal({ name: 'spec-agent', version: '1.0.0' });
    expect(JSON.parse(await hop.fromLeft.take())).to.deep.equal({
      jsonrpc: '2.0',
      id: 1,
      method: 'mcp/message',
      params: {
        serverId: 'srv-1',
        requestId: 'r-1',
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: { text: 'hi' },
          _meta: { ...META, 'io.modelcontextprotocol/clientInfo': { name: 'spec-agent', version: '1.0.0' } },
        },
      },
    });
    expect(JSON.parse(await hop.fromRight.take())).to.deep.equal({
      jsonrpc: '2.0',
      id: 1,
      result: { result: { content: [{ type: 'text', text: 'echo hi' }] } },
    });
    expect(tools.declaration).to.deep.equal({ type: 'acp', name: 'tools', serverId: 'srv-1' });
  });

  it('keeps an MCP error inside the carrier: thrown McpProtocolError or returned {error}', async () => {
    provider.register({
      name: 'a',
      serverId: 'thrower',
      handler: () => Promise.reject(new McpProtocolError(-32602, 'unknown tool', { name: 'x' })),
    });
    provider.register({ name: 'b', serverId: 'returner', handler: () => ({ error: { code: -32001, message: 'busy' } }) });
    expect(await caller.request('thrower', 'tools/call', {})).to.deep.equal({
      error: { code: -32602, message: 'unknown tool', data: { name: 'x' } },
    });
    expect(await caller.request('returner', 'tools/call', {})).to.deep.equal({ error: { code: -32001, message: 'busy' } });
  });

  it('answers -33001 with the serverId for a server nobody registered, and -32602 for malformed params', async () => {
    const unknown = await rejectionOf<RpcError>(caller.request('nobody', 'tools/list'));
    expect(unknown)
      .to.be.instanceOf(RpcError)
      .and.deep.include({ code: McpBindingErrorCode.ServerUnavailable, data: { serverId: 'nobody' } });
    const malformed = await rejectionOf<RpcError>(
      hop.left.sendRequest('mcp/message', { serverId: 1, requestId: 'r', method: 'tools/list' }),
    );
    expect(malformed).to.deep.include({ code: -32602 });
  });

  it('refuses a second active request with the same requestId -32602, and one over maxActiveRequests -33000', async () => {
    const release = deferred();
    provider.register({
      name: 'slow',
      serverId: 'slow',
      maxActiveRequests: 2,
      handler: async () => (await release.promise, { result: null }),
    });
    const first = caller.request('slow', 'tools/call', {}, { requestId: 'same' });
    const duplicate = hop.left.sendRequest('mcp/message', {
      serverId: 'slow',
      requestId: 'same',
      method: 'tools/call',
      params: { _meta: META },
    });
    const second = caller.request('slow', 'tools/call', {}, { requestId: 'other' });
    const third = caller.request('slow', 'tools/call', {}, { requestId: 'third' });
    expect(await rejectionOf(duplicate)).to.deep.include({ code: McpBindingErrorCode.InvalidParams });
    expect(await rejectionOf(third)).to.deep.include({ code: McpBindingErrorCode.ResourceLimitExceeded, data: { serverId: 'slow' } });
    release.resolve();
    expect(await first).to.deep.equal({ result: null });
    expect(await second).to.deep.equal({ result: null });
  });

  it('answers -33002 when the handler throws, or returns neither or both of result and error', async () => {
    provider.register({ name: 'x', serverId: 'throws', handler: () => Promise.reject(new Error('disk on fire')) });
    provider.register({ name: 'y', serverId: 'empty', handler: () => ({}) as never });
    provider.register({ name: 'z', serverId: 'both', handler: () => ({ result: 1, error: { code: 1, message: 'm' } }) as never });
    expect(await rejectionOf(caller.request('throws', 'tools/call'))).to.deep.include({ code: -33002, data: { details: 'disk on fire' } });
    expect(await rejectionOf(caller.request('empty', 'tools/call'))).to.deep.include({ code: -33002 });
    expect(await rejectionOf(caller.request('both', 'tools/call'))).to.deep.include({ code: -33002 });
  });

  it('answers an MCP error in the carrier for a request without the revision _meta, or another revision', async () => {
    let calls = 0;
    provider.register({ name: 'x', serverId: 's', handler: () => (calls++, { result: null }) });
    const missing = await hop.left.sendRequest('mcp/message', { serverId: 's', requestId: 'a', method: 'tools/list' });
    expect(missing).to.deep.include({
      error: { code: -32602, message: 'Invalid params: params._meta has no io.modelcontextprotocol/protocolVersion' },
    });
    const other = await hop.left.sendRequest('mcp/message', {
      serverId: 's',
      requestId: 'b',
      method: 'tools/list',
      params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2025-06-18' } },
    });
    expect(other).to.deep.equal({
      error: {
        code: -32022,
        message: 'Unsupported protocol version',
        data: { supported: [MCP_PROTOCOL_VERSION], requested: '2025-06-18' },
      },
    });
    expect(calls).to.equal(0);
  });

  it('routes request-scoped notifications to their request, and drops those sent after the answer', async () => {
    let notifyLater!: McpRequestContext['notify'];
    provider.register({
      name: 'p',
      serverId: 'progress',
      handler: (context) => {
        context.notify('notifications/progress', { progress: 1, total: 2 });
        notifyLater = context.notify;
        return { result: { done: true } };
      },
    });
    const received: McpNotification[] = [];
    const outcome = await caller.request('progress', 'tools/call', {}, { requestId: 'p-1', onNotification: (n) => received.push(n) });
    expect(outcome).to.deep.equal({ result: { done: true } });
    expect(received).to.deep.equal([{ method: 'notifications/progress', params: { progress: 1, total: 2 } }]);
    notifyLater('notifications/progress', { progress: 2, total: 2 });
    await hop.left.sendRequest('mcp/message', { serverId: 'nobody', requestId: 'x', method: 'm' }).then(undefined, () => undefined);
    expect(hop.fromRight.messages.filter((m) => 'method' in m && m.method === 'mcp/message')).to.have.lengthOf(1);
  });

  it("aborts the handler's signal on the caller's cancel, sends $/cancel_request, and answers -32800 even if the handler then returns a result", async () => {
    const started = deferred<AbortSignal>();
    provider.register({
      name: 'hang',
      serverId: 'hang',
      handler: async ({ signal }) => {
        started.resolve(signal);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return { result: 'late' };
      },
    });
    const controller = new AbortController();
    const call = caller.request('hang', 'tools/call', {}, { signal: controller.signal });
    const signal = await started.promise;
    controller.abort();
    const error = await rejectionOf(call);
    expect(signal.aborted).to.equal(true);
    expect(error).to.deep.include({ code: -32800 });
    expect(hop.fromLeft.messages.map((m) => ('method' in m ? m.method : 'answer'))).to.deep.equal(['mcp/message', '$/cancel_request']);
  });

  it('unregistering cancels active requests (-32800) and later ones are -33001; an id is registered once', async () => {
    const started = deferred();
    const server = provider.register({
      name: 'gone',
      serverId: 'gone',
      handler: ({ signal }) =>
        new Promise((_, reject) => (started.resolve(), signal.addEventListener('abort', () => reject(signal.reason)))),
    });
    const active = caller.request('gone', 'tools/call');
    await started.promise;
    await server.dispose();
    expect(await rejectionOf(active)).to.deep.include({ code: -32800 });
    expect(await rejectionOf(caller.request('gone', 'tools/call'))).to.deep.include({ code: -33001 });
    expect(() => provider.register({ name: 'again', serverId: 'gone', handler: () => ({ result: null }) }))
      .to.throw(McpServerIdTakenError)
      .with.property('code', 'ACP_WIRE_MCP_SERVER_ID_TAKEN');
  });
});
