/**
 * The official ACP SDK's `McpOverAcpHttpBridge` (`@agentclientprotocol/sdk/experimental/mcp-http`)
 * in front of acp-wire: an SDK agent re-exports the `type: "acp"` servers of its `session/new` as
 * loopback MCP 2026-07-28 HTTP endpoints, and an MCP client's POSTs to them become `mcp/message`
 * requests answered by an acp-wire McpProvider, directly and through a Conductor whose
 * ProxyComponent serves the server (`serveMcp`). Every `mcp/message` on the ACP wire is checked
 * against the official unstable schema.
 */
import * as acp from '@agentclientprotocol/sdk/unstable';
import { McpOverAcpHttpBridge, type McpServerHttpDeclaration } from '@agentclientprotocol/sdk/experimental/mcp-http';
import { McpServer } from '@modelcontextprotocol/server';
import { expect } from 'chai';
import * as z from 'zod';
import { McpProvider, mcpServerHandler, type McpServerHandler } from '../../lib/mcp';
import { type Deferred, deferred } from '../helpers/async';
import type { LineReader } from '../helpers/lines';
import { mcpChain, type McpChain } from '../helpers/mcp-chain';
import { postMcp } from '../helpers/mcp-http';
import { mcpAnswerErrors, mcpSchemaErrors, sdkHop, type SdkHop } from '../helpers/mcp-sdk';

/** A library server: `echo`, `progress` (one notification) and `hang` (until its signal aborts, reported to `onHang`). */
function libraryTools(onHang: (signal: AbortSignal) => void): McpServer {
  const server = new McpServer({ name: 'wire-tools', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('progress', { inputSchema: z.object({}) }, async (_args, ctx) => {
    await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } });
    return { content: [{ type: 'text', text: 'done' }] };
  });
  server.registerTool(
    'hang',
    { inputSchema: z.object({}) },
    (_args, ctx) =>
      new Promise((resolve) => {
        onHang(ctx.mcpReq.signal);
        ctx.mcpReq.signal.addEventListener('abort', () => resolve({ content: [] }), { once: true });
      }),
  );
  return server;
}

/** Adds to an SDK agent app a `session/new` handler that adapts its servers with `caller`'s HTTP bridge into `adapted`. */
function withHttpBridge(app: acp.AgentApp, caller: acp.McpOverAcpCaller, adapted: Deferred<unknown[]>): acp.AgentApp {
  const bridge = new McpOverAcpHttpBridge(caller);
  return app.onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
    adapted.resolve(await bridge.adaptServers(client, params.mcpServers));
    return { sessionId: 'http-bridge' };
  });
}

/** The adapted declaration named `name`. */
function httpServer(servers: unknown[], name: string): McpServerHttpDeclaration {
  const server = servers.find((s) => (s as { name?: string }).name === name) as McpServerHttpDeclaration | undefined;
  if (server?.type !== 'http') throw new Error(`no http declaration ${name} in ${JSON.stringify(servers)}`);
  return server;
}

/** The `mcp/message` requests and `$/cancel_request` notifications among `reader`'s lines. */
function mcpTraffic(reader: LineReader): { requests: { id: unknown }[]; cancels: unknown[] } {
  const messages = reader.messages as { id?: unknown; method?: string }[];
  return {
    requests: messages.filter((m) => m.method === 'mcp/message' && m.id !== undefined) as { id: unknown }[],
    cancels: messages.filter((m) => m.method === '$/cancel_request'),
  };
}

/** The `proxy/successor` requests among `reader`'s lines that carry an `mcp/message`. */
function enveloped(reader: LineReader): { id: unknown }[] {
  const messages = reader.messages as { id?: unknown; method?: string; params?: { method?: string } }[];
  return messages.filter((m) => m.id !== undefined && m.method === 'proxy/successor' && m.params?.method === 'mcp/message') as {
    id: unknown;
  }[];
}

describe("The official ACP SDK's McpOverAcpHttpBridge in front of acp-wire", () => {
  describe('an SDK agent → McpProvider (acp-wire client) serving a library server', () => {
    let hop: SdkHop;
    let tools: McpServerHandler;
    let handle: acp.AgentConnection;
    let hung: Deferred<AbortSignal>;
    let endpoint: McpServerHttpDeclaration;
    let servers: unknown[];

    beforeEach(async () => {
      hop = sdkHop();
      const provider = new McpProvider();
      provider.serve(hop.connection);
      hung = deferred<AbortSignal>();
      tools = mcpServerHandler(() => libraryTools(hung.resolve));
      const registration = provider.register({ name: 'wire-tools', serverId: 'wire-tools', handler: tools.handler });
      const adapted = deferred<unknown[]>();
      const caller = new acp.McpOverAcpCaller({ clientInfo: { name: 'sdk-http-agent', version: '1.0.0' } });
      const app = acp.agent({ name: 'sdk-http-agent' }).onNotification(acp.methods.agent.mcp.message, caller.handleNotification);
      handle = withHttpBridge(app, caller, adapted).connect(hop.stream);
      const other = { name: 'other', command: 'x', args: [], env: [] };
      await hop.connection.sendRequest('session/new', {
        cwd: '/',
        mcpServers: [registration.declaration, other, { type: 'acp', name: 'nobody', serverId: 'nobody' }],
      });
      servers = await adapted.promise;
      endpoint = httpServer(servers, 'wire-tools');
    });
    afterEach(async () => {
      await tools.close();
      await hop.connection.close();
      await handle.closed;
    });

    it('re-exports each acp server as a 127.0.0.1 http declaration with a bearer token and leaves the others', () => {
      expect(endpoint.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/mcp-/);
      expect(endpoint.headers).to.have.lengthOf(1);
      expect(endpoint.headers[0]).to.have.property('name', 'Authorization');
      expect(endpoint.headers[0]!.value).to.match(/^Bearer \S+$/);
      expect(servers[1]).to.deep.equal({ name: 'other', command: 'x', args: [], env: [] });
    });

    it('answers tools/list and tools/call over HTTP from the provider; every mcp/message validates', async () => {
      const list = await postMcp(endpoint, 1, 'tools/list').answer;
      expect(list).to.deep.include({ status: 200, contentType: 'application/json' });
      expect(list.messages[0]).to.have.nested.property('result.tools').that.is.an('array').with.lengthOf(3);
      const call = await postMcp(endpoint, 2, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }).answer;
      expect(call.messages).to.have.lengthOf(1);
      expect(call.messages[0]).to.deep.include({ jsonrpc: '2.0', id: 2 });
      expect(call.messages[0])
        .to.have.nested.property('result.content')
        .that.deep.equals([{ type: 'text', text: 'hi' }]);
      expect(mcpTraffic(hop.fromSdk).requests).to.have.lengthOf(2);
      expect(mcpSchemaErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
      expect(mcpAnswerErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
    });

    it("streams the tool's progress notification as SSE before the result", async () => {
      const answer = await postMcp(endpoint, 3, 'tools/call', { name: 'progress', arguments: {} }).answer;
      expect(answer).to.deep.include({ status: 200, contentType: 'text/event-stream' });
      expect(answer.messages).to.have.lengthOf(2);
      expect(answer.messages[0]).to.deep.equal({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'p', progress: 1 },
      });
      expect(answer.messages[1]).to.have.nested.property('result.content[0].text', 'done');
      expect(mcpSchemaErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
    });

    it("keeps an inner MCP error an MCP error: the carrier's {error} becomes the HTTP answer's error (400 for -32602)", async () => {
      const answer = await postMcp(endpoint, 4, 'tools/call', { name: 'nope', arguments: {} }).answer;
      expect(answer.status).to.equal(400);
      expect(answer.messages[0]).to.deep.include({ jsonrpc: '2.0', id: 4 });
      expect(answer.messages[0]).to.have.nested.property('error.code', -32602);
      const carrier = hop.fromWire.messages.find((m) => 'result' in m) as { result: unknown };
      expect(carrier.result).to.have.nested.property('error.code', -32602);
      expect(mcpAnswerErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
    });

    it("answers an unknown serverId with the provider's outer -33001 as the HTTP answer's error (status 200, data dropped)", async () => {
      const answer = await postMcp(httpServer(servers, 'nobody'), 5, 'tools/list').answer;
      expect(answer.status).to.equal(200);
      expect(answer.messages[0]).to.deep.equal({
        jsonrpc: '2.0',
        id: 5,
        error: { code: -33001, message: 'no MCP server with this serverId' },
      });
      const refusal = hop.fromWire.messages.find((m) => 'error' in m);
      expect(refusal).to.have.nested.property('error.data.serverId', 'nobody');
    });

    it("cancels when the HTTP client goes away: $/cancel_request names the hop's id and the tool's signal aborts", async () => {
      const exchange = postMcp(endpoint, 6, 'tools/call', { name: 'hang', arguments: {} });
      exchange.answer.catch(() => undefined);
      const signal = await hung.promise;
      const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      exchange.request.destroy();
      await aborted;
      const cancel = await hop.fromSdk.findMessage((m) => 'method' in m && m.method === '$/cancel_request');
      const [request] = mcpTraffic(hop.fromSdk).requests;
      expect(cancel).to.deep.equal({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: request!.id } });
      const answer = await hop.fromWire.findMessage((m) => 'id' in m && m.id === request!.id && !('method' in m));
      expect(answer).to.have.nested.property('error.code', -32800);
    });
  });

  describe('an SDK agent → Conductor → a passthrough proxy → a ProxyComponent serving the server (serveMcp)', () => {
    let chain: McpChain;
    let tools: McpServerHandler;
    let hung: Deferred<AbortSignal>;
    let endpoint: McpServerHttpDeclaration;

    beforeEach(async () => {
      const adapted = deferred<unknown[]>();
      chain = mcpChain({ configureAgent: (app, caller) => withHttpBridge(app, caller, adapted) });
      hung = deferred<AbortSignal>();
      tools = mcpServerHandler(() => libraryTools(hung.resolve));
      const registration = chain.proxyProvider.register({ name: 'proxy-tools', serverId: 'proxy-tools', handler: tools.handler });
      // As a tool proxy does: every session opened through it gets its server.
      chain.proxy1.onClientRequest<{ mcpServers: unknown[] }>('session/new', (params, responder) => {
        chain.proxy1.successor
          .sendRequest('session/new', { ...params, mcpServers: [...params.mcpServers, registration.declaration] })
          .forwardResponseTo(responder);
      });
      await chain.initialize();
      await chain.client.agent.request(acp.methods.agent.session.new, { cwd: '/', mcpServers: [] });
      endpoint = httpServer(await adapted.promise, 'proxy-tools');
    });
    afterEach(async () => {
      await tools.close();
      await chain.close();
    });

    it("answers tools/call over HTTP from the proxy's server; the request stops at the proxy and validates", async () => {
      const answer = await postMcp(endpoint, 1, 'tools/call', { name: 'echo', arguments: { text: 'via the chain' } }).answer;
      expect(answer).to.deep.include({ status: 200, contentType: 'application/json' });
      expect(answer.messages[0]).to.have.nested.property('result.content[0].text', 'via the chain');
      const reached = chain.towardClient.map((reader) => mcpTraffic(reader).requests.length > 0 || enveloped(reader).length > 0);
      expect(reached).to.deep.equal([true, true, true, true, false, false]);
      expect(mcpSchemaErrors(chain.agentHop.fromSdk)).to.deep.equal([]);
      expect(mcpAnswerErrors(chain.agentHop.fromSdk, chain.agentHop.fromWire)).to.deep.equal([]);
    });

    it("cancels hop by hop when the HTTP client goes away: each hop gets one $/cancel_request and the tool's signal aborts", async () => {
      const exchange = postMcp(endpoint, 2, 'tools/call', { name: 'hang', arguments: {} });
      exchange.answer.catch(() => undefined);
      const signal = await hung.promise;
      const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      exchange.request.destroy();
      await aborted;
      for (const reader of chain.towardClient.slice(0, 4)) {
        await reader.findMessage((m) => 'method' in m && m.method === '$/cancel_request');
        const [request] = [...mcpTraffic(reader).requests, ...enveloped(reader)];
        expect(mcpTraffic(reader).cancels, reader.toString()).to.deep.equal([
          { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: request!.id } },
        ]);
      }
    });
  });
});
