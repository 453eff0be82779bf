/**
 * MCP-over-ACP between acp-wire and the official ACP SDK (`@agentclientprotocol/sdk/unstable`), both
 * ways, in process over a pair of streams: the SDK's McpOverAcpCaller against McpProvider (with a
 * server written with the MCP server library), acp-wire's McpCaller against the SDK's
 * McpOverAcpProvider, and both through a Conductor with two ProxyComponents. Every `mcp/message`
 * on the wire is checked against the official unstable schema.
 */
import * as acp from '@agentclientprotocol/sdk/unstable';
import { McpServer } from '@modelcontextprotocol/server';
import { expect } from 'chai';
import * as z from 'zod';
import { Connection } from '../../lib';
import { McpCaller, McpProvider, mcpServerHandler, type McpNotification, type McpServerHandler } from '../../lib/mcp';
import { deferred, rejectionOf } from '../helpers/async';
import type { LineReader } from '../helpers/lines';
import { mcpChain, type McpChain } from '../helpers/mcp-chain';
import { mcpAnswerErrors, mcpSchemaErrors, sdkHop, type SdkHop } from '../helpers/mcp-sdk';

const SERVER_INFO = { name: 'wire-tools', version: '1.0.0' };

/** A library server: `echo`, `progress` (one notification) and `hang` (until cancelled). */
function libraryTools(onHang: (signal: AbortSignal) => void): McpServer {
  const server = new McpServer(SERVER_INFO);
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('progress', { inputSchema: z.object({}) }, async (_args, ctx) => {
    await ctx.mcpReq.notify({
      method: 'notifications/progress',
      params: { progressToken: ctx.mcpReq._meta?.progressToken ?? 'none', progress: 1 },
    });
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

describe('MCP-over-ACP with the official ACP SDK', () => {
  describe("the SDK's McpOverAcpCaller (agent) → McpProvider (acp-wire client) serving a library server", () => {
    let hop: SdkHop;
    let provider: McpProvider;
    let tools: McpServerHandler;
    let handle: acp.AgentConnection;
    let caller: acp.McpOverAcpCaller;
    let hung: ((signal: AbortSignal) => void) | undefined;

    beforeEach(() => {
      hop = sdkHop();
      provider = new McpProvider();
      provider.serve(hop.connection);
      hung = undefined;
      tools = mcpServerHandler(() => libraryTools((signal) => hung?.(signal)));
      provider.register({ name: 'wire-tools', serverId: 'wire-tools', handler: tools.handler });
      caller = new acp.McpOverAcpCaller({ clientInfo: { name: 'sdk-agent', version: '1.0.0' } });
      handle = acp
        .agent({ name: 'sdk-agent' })
        .onNotification(acp.methods.agent.mcp.message, caller.handleNotification)
        .connect(hop.stream);
    });
    afterEach(async () => {
      await tools.close();
      await hop.connection.close();
      await handle.closed;
    });

    it('lists and calls tools; every mcp/message validates against the unstable schema', async () => {
      const list = await caller.request(handle.client, 'wire-tools', 'tools/list');
      expect(list).to.have.nested.property('result.tools').that.is.an('array').with.lengthOf(3);
      const call = await caller.request(handle.client, 'wire-tools', 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
      expect(call)
        .to.have.nested.property('result.content')
        .that.deep.equals([{ type: 'text', text: 'hi' }]);
      const received: acp.McpNotification[] = [];
      const progress = await caller.request(
        handle.client,
        'wire-tools',
        'tools/call',
        { name: 'progress', arguments: {}, _meta: { progressToken: 7 } },
        { onNotification: (notification) => received.push(notification) },
      );
      expect(progress).to.have.nested.property('result.content[0].text', 'done');
      expect(received).to.deep.equal([{ method: 'notifications/progress', params: { progressToken: 7, progress: 1 } }]);
      expect(mcpSchemaErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
      expect(mcpAnswerErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
    });

    it('keeps an inner MCP error in the carrier (the SDK resolves with {error})', async () => {
      const outcome = await caller.request(handle.client, 'wire-tools', 'tools/call', { name: 'nope', arguments: {} });
      expect(outcome).to.have.nested.property('error.code', -32602);
      const answer = hop.fromWire.messages.find((m) => 'result' in m) as { result: unknown };
      expect(answer.result).to.have.nested.property('error.code', -32602);
      expect(mcpAnswerErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
    });

    it('rejects a request for an unknown serverId with -33001 naming it', async () => {
      const error = await rejectionOf(caller.request(handle.client, 'nobody', 'tools/list'));
      expect(error).to.deep.include({ code: -33001, data: { serverId: 'nobody' } });
    });

    it("cancels through the SDK's signal: the tool's signal aborts and the SDK rejects -32800", async () => {
      const started = deferred<AbortSignal>();
      hung = started.resolve;
      const controller = new AbortController();
      const call = caller.request(
        handle.client,
        'wire-tools',
        'tools/call',
        { name: 'hang', arguments: {} },
        { signal: controller.signal },
      );
      const signal = await started.promise;
      controller.abort();
      expect(await rejectionOf(call)).to.have.property('code', -32800);
      expect(signal.aborted).to.equal(true);
      const request = hop.fromSdk.messages.find((m) => 'method' in m && m.method === 'mcp/message') as { id: unknown };
      const cancel = await hop.fromSdk.findMessage((m) => 'method' in m && m.method === '$/cancel_request');
      expect(cancel).to.deep.equal({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: request.id } });
    });
  });

  describe("McpCaller (acp-wire agent) → the SDK's McpOverAcpProvider (client)", () => {
    let hop: SdkHop;
    let handle: acp.ClientConnection;
    let sdkProvider: acp.McpOverAcpProvider;
    let caller: McpCaller;

    beforeEach(() => {
      hop = sdkHop();
      sdkProvider = new acp.McpOverAcpProvider();
      handle = acp.client({ name: 'sdk-client' }).onRequest(acp.methods.client.mcp.message, sdkProvider.handleRequest).connect(hop.stream);
      caller = new McpCaller(hop.connection, { clientInfo: { name: 'wire-agent', version: '1.0.0' } });
      caller.listen(hop.connection);
    });
    afterEach(async () => {
      await hop.connection.close();
      await handle.closed;
    });

    it("gets the SDK handler's result and MCP error as outcomes, its notifications first; the messages validate", async () => {
      const seen: acp.McpOperationContext[] = [];
      sdkProvider.registerServer(handle.agent, {
        name: 'sdk-tools',
        serverId: 'sdk-tools',
        handler: async (context) => {
          seen.push(context);
          if (context.method === 'tools/list') return { error: { code: -32001, message: 'busy' } };
          await context.notify('notifications/progress', { progressToken: 'p', progress: 1 });
          return { result: { content: [{ type: 'text', text: 'from the SDK' }] } };
        },
      });
      const received: McpNotification[] = [];
      const call = await caller.request(
        'sdk-tools',
        'tools/call',
        { name: 'x', arguments: {} },
        { onNotification: (n) => received.push(n) },
      );
      expect(call).to.deep.equal({ result: { content: [{ type: 'text', text: 'from the SDK' }] } });
      expect(received).to.deep.equal([{ method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } }]);
      expect(await caller.request('sdk-tools', 'tools/list')).to.deep.equal({ error: { code: -32001, message: 'busy' } });
      expect(seen[0]).to.deep.include({ serverId: 'sdk-tools', method: 'tools/call', protocolVersion: '2026-07-28' });
      expect(seen[0]!.clientInfo).to.deep.equal({ name: 'wire-agent', version: '1.0.0' });
      expect(mcpSchemaErrors(hop.fromSdk, hop.fromWire)).to.deep.equal([]);
      expect(mcpAnswerErrors(hop.fromWire, hop.fromSdk)).to.deep.equal([]);
    });

    it('is answered -33001 by the SDK for an unknown serverId', async () => {
      expect(await rejectionOf(caller.request('nobody', 'tools/list'))).to.have.property('code', -33001);
    });

    /** Registers `hang` on the SDK provider: its handler waits for its signal, then settles with `onAbort`. */
    function registerHang(onAbort: (signal: AbortSignal) => Promise<acp.McpOutcome>): Promise<AbortSignal> {
      const started = deferred<AbortSignal>();
      sdkProvider.registerServer(handle.agent, {
        name: 'hang',
        serverId: 'hang',
        handler: ({ signal }) =>
          new Promise((resolve) => {
            started.resolve(signal);
            signal.addEventListener('abort', () => resolve(onAbort(signal)), { once: true });
          }),
      });
      return started.promise;
    }

    it("cancels with $/cancel_request: the SDK handler's signal aborts, it rejects, and McpCaller rejects -32800", async () => {
      const started = registerHang((signal) => Promise.reject(signal.reason));
      const controller = new AbortController();
      const call = caller.request('hang', 'tools/call', {}, { signal: controller.signal });
      const signal = await started;
      controller.abort();
      expect(await rejectionOf(call)).to.have.property('code', -32800);
      expect(signal.aborted).to.equal(true);
      const request = hop.fromWire.messages.find((m) => 'method' in m && m.method === 'mcp/message') as { id: unknown };
      expect(await hop.fromWire.findMessage((m) => 'method' in m && m.method === '$/cancel_request')).to.deep.equal({
        jsonrpc: '2.0',
        method: '$/cancel_request',
        params: { requestId: request.id },
      });
    });

    it('resolves with the result the SDK answers when its handler returns one after the cancel (a late answer is delivered)', async () => {
      const started = registerHang(() => Promise.resolve({ result: 'late' }));
      const controller = new AbortController();
      const call = caller.request('hang', 'tools/call', {}, { signal: controller.signal });
      await started;
      controller.abort();
      expect(await call).to.deep.equal({ result: 'late' });
    });
  });

  describe("through a Conductor: the SDK's agent calls a proxy's server (serveMcp) and the SDK client's server", () => {
    let chain: McpChain;
    let tools: McpServerHandler;

    beforeEach(async () => {
      chain = mcpChain();
      tools = mcpServerHandler(() => libraryTools(() => undefined));
      chain.proxyProvider.register({ name: 'proxy-tools', serverId: 'proxy-tools', handler: tools.handler });
      await chain.initialize();
    });
    afterEach(async () => {
      await tools.close();
      await chain.close();
    });

    /** The `mcp/message` request among `reader`'s lines, plain or in a `proxy/successor` envelope: its hop id and its params. */
    function mcpRequestOn(reader: LineReader, requestId: string): { id: unknown; params: unknown } | undefined {
      for (const message of reader.messages) {
        const m = message as {
          id?: unknown;
          method?: string;
          params?: { method?: string; params?: { requestId?: string }; requestId?: string };
        };
        if (m.id === undefined) continue;
        if (m.method === 'mcp/message' && m.params?.requestId === requestId) return { id: m.id, params: m.params };
        if (m.method === 'proxy/successor' && m.params?.method === 'mcp/message' && m.params.params?.requestId === requestId) {
          return { id: m.id, params: m.params.params };
        }
      }
      return undefined;
    }

    it("answers the proxy's server at the proxy and the client's at the SDK client; serverId, requestId and inner _meta are unchanged at every hop", async () => {
      chain.sdkProvider.registerServer(chain.client.agent, {
        name: 'client-tools',
        serverId: 'client-tools',
        handler: (context) => ({ result: { content: [{ type: 'text', text: `client saw ${context.method}` }] } }),
      });
      const fromProxy = await chain.caller.request(
        chain.agent.client,
        'proxy-tools',
        'tools/call',
        { name: 'echo', arguments: { text: 'p' } },
        { requestId: 'to-proxy' },
      );
      expect(fromProxy).to.have.nested.property('result.content[0].text', 'p');
      const fromClient = await chain.caller.request(
        chain.agent.client,
        'client-tools',
        'tools/list',
        { cursor: 'c' },
        { requestId: 'to-client' },
      );
      expect(fromClient).to.deep.equal({ result: { content: [{ type: 'text', text: 'client saw tools/list' }] } });

      const toClient = chain.towardClient.map((reader) => mcpRequestOn(reader, 'to-client'));
      expect(toClient.every((hop) => hop !== undefined)).to.equal(true);
      const sent = toClient[0]!.params as { params: { _meta: Record<string, unknown> } };
      expect(sent).to.deep.equal({
        serverId: 'client-tools',
        requestId: 'to-client',
        method: 'tools/list',
        params: {
          cursor: 'c',
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'sdk-agent', version: '1.0.0' },
          },
        },
      });
      for (const hop of toClient) expect(hop!.params).to.deep.equal(sent);
      // The proxy answers its own server: the request goes no further toward the client than proxy1.
      const toProxy = chain.towardClient.map((reader) => mcpRequestOn(reader, 'to-proxy'));
      expect(toProxy.map((hop) => hop !== undefined)).to.deep.equal([true, true, true, true, false, false]);
      for (const hop of toProxy.slice(0, 4)) expect(hop!.params).to.deep.equal(toProxy[0]!.params);
      expect(mcpSchemaErrors(chain.agentHop.fromSdk, chain.clientHop.fromWire)).to.deep.equal([]);
      expect(mcpAnswerErrors(chain.clientHop.fromWire, chain.clientHop.fromSdk)).to.deep.equal([]);
      expect(mcpAnswerErrors(chain.agentHop.fromSdk, chain.agentHop.fromWire)).to.deep.equal([]);
    });

    it("cancels hop by hop: each hop's $/cancel_request names that hop's id, the SDK client's handler aborts, the agent gets -32800", async () => {
      const started = deferred<AbortSignal>();
      chain.sdkProvider.registerServer(chain.client.agent, {
        name: 'client-hang',
        serverId: 'client-hang',
        handler: ({ signal }) =>
          new Promise((_resolve, reject) => {
            started.resolve(signal);
            signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
      });
      const controller = new AbortController();
      const call = chain.caller.request(
        chain.agent.client,
        'client-hang',
        'tools/call',
        { name: 'x' },
        { requestId: 'hang-1', signal: controller.signal },
      );
      const signal = await started.promise;
      controller.abort();
      expect(await rejectionOf(call)).to.have.property('code', -32800);
      expect(signal.aborted).to.equal(true);
      for (const reader of chain.towardClient) {
        const { id } = mcpRequestOn(reader, 'hang-1')!;
        const cancels = reader.messages.filter((m) => 'method' in m && m.method === '$/cancel_request') as { params: unknown }[];
        expect(cancels, reader.toString()).to.deep.equal([{ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } }]);
      }
    });
  });
});
