/**
 * Cancellation through the bridge: an HTTP MCP client that closes its request, or one that sends
 * `notifications/cancelled`, cancels the `mcp/message` on the bridge's own hop with that hop's id;
 * the provider's handler sees its signal abort; the logical requestId is the same on every hop.
 */
import { expect } from 'chai';
import type { McpRequestContext } from '../../lib/mcp';
import { deferred } from '../helpers/async';
import type { WireMessage } from '../helpers/messages';
import { type BridgeChain, httpDeclarationOf, httpPost, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';

const HANG = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'hang', arguments: {} } };

/** Resolves with the `hang` call's context once the provider's handler runs it. */
function hangStarted(chain: BridgeChain): Promise<McpRequestContext> {
  const started = deferred<McpRequestContext>();
  const calls = chain.calls;
  const push = calls.push.bind(calls);
  calls.push = (...items: McpRequestContext[]) => {
    for (const item of items) if (item.params?.name === 'hang') started.resolve(item);
    return push(...items);
  };
  return started.promise;
}

function isMcpMessage(message: WireMessage): boolean {
  return message.method === 'mcp/message';
}

describe('McpBridge cancellation over HTTP', function () {
  this.timeout(20000);
  useBuild();

  let chain: BridgeChain;
  let url: string;
  let headers: Record<string, string>;

  beforeEach(async () => {
    chain = startBridgeChain({ version: 1, transports: ['http'] });
    await chain.client.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
    await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [{ type: 'acp', name: 'tools', serverId: 'tools-1' }] });
    const declaration = httpDeclarationOf(chain.received);
    url = declaration.url;
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } };
    const answer = await httpPost(url, init, { headers: { authorization: declaration.authorization } });
    headers = { authorization: declaration.authorization, 'mcp-session-id': String(answer.headers['mcp-session-id']) };
  });
  afterEach(() => chain.close());

  /** The `mcp/message` of the hang call as the bridge sent it, and as the client got it. */
  async function hangMessages(): Promise<{ onBridgeHop: WireMessage; onClientHop: WireMessage }> {
    const isHang = (m: WireMessage): boolean => isMcpMessage(m) && (m.params as { method?: string }).method === 'tools/call';
    const onBridgeHop = JSON.parse(await chain.hop.fromRight.take(isHang)) as WireMessage;
    const onClientHop = JSON.parse(await chain.client.fromRight.take(isHang)) as WireMessage;
    return { onBridgeHop, onClientHop };
  }

  it('closing the HTTP request aborts the handler and sends one $/cancel_request with the hop id; the requestId is the same on both hops', async () => {
    const started = hangStarted(chain);
    let abort!: () => void;
    const post = httpPost(url, HANG, { headers, onSent: (a) => (abort = a) }).then(
      () => 'answered',
      () => 'aborted',
    );
    const context = await started;
    abort();
    expect(await post).to.equal('aborted');
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
    const { onBridgeHop, onClientHop } = await hangMessages();
    expect((onClientHop.params as { requestId: string }).requestId).to.equal((onBridgeHop.params as { requestId: string }).requestId);
    expect(context.requestId).to.equal((onBridgeHop.params as { requestId: string }).requestId);
    const cancel = await chain.hop.fromRight.take((m) => m.method === '$/cancel_request');
    expect(cancel).to.equal(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(onBridgeHop.id)}}}`);
    await chain.client.fromRight.take(
      (m) => m.method === '$/cancel_request' && (m.params as { requestId: unknown }).requestId === onClientHop.id,
    );
    expect(chain.hop.fromRight.matching((m) => m.method === '$/cancel_request')).to.have.lengthOf(1);
  });

  it('notifications/cancelled for a request in flight aborts the handler, cancels the hop once, and answers -32800 instead of the late result', async () => {
    const started = hangStarted(chain);
    const post = httpPost(url, HANG, { headers });
    const context = await started;
    const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'user' } };
    expect((await httpPost(url, cancelled, { headers })).status).to.equal(202);
    const answer = await post;
    expect(JSON.parse(answer.body)).to.deep.equal({ jsonrpc: '2.0', id: 7, error: { code: -32800, message: 'Request cancelled' } });
    expect(context.signal.aborted).to.equal(true);
    const { onBridgeHop } = await hangMessages();
    const cancel = await chain.hop.fromRight.take((m) => m.method === '$/cancel_request');
    expect(JSON.parse(cancel)).to.deep.equal({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: onBridgeHop.id } });
  });
});
