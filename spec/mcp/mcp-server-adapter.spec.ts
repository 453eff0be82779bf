/**
 * mcpServerHandler: tools written with the official MCP server library (`@modelcontextprotocol/server`)
 * served over MCP-over-ACP, one hop (acp-wire's McpCaller → McpProvider), revision 2026-07-28
 * without MCP `initialize`.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as z from 'zod';
import { McpCaller, McpProvider, mcpServerHandler, type McpNotification, type McpServerHandler } from '../../lib/mcp';
import { deferred, rejectionOf } from '../helpers/async';
import { collectGarbage } from '../helpers/events';
import { tappedPair, type TappedPair } from '../helpers/peers';
import { ROOT } from '../helpers/processes';

const SERVER_INFO = { name: 'spec-tools', version: '1.0.0' };

/** A fresh library server: `echo`, `progress` (two progress notifications) and `hang` (until cancelled). */
function specTools(onHang?: (signal: AbortSignal) => void): McpServer {
  const server = new McpServer(SERVER_INFO);
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('progress', { inputSchema: z.object({}) }, async (_args, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken ?? 'none';
    for (const progress of [1, 2]) {
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 2 } });
    }
    return { content: [{ type: 'text', text: 'done' }] };
  });
  server.registerTool(
    'hang',
    { inputSchema: z.object({}) },
    (_args, ctx) =>
      new Promise((resolve) => {
        onHang?.(ctx.mcpReq.signal);
        ctx.mcpReq.signal.addEventListener('abort', () => resolve({ content: [] }), { once: true });
      }),
  );
  return server;
}

describe('mcpServerHandler (tools written with the MCP server library)', () => {
  let hop: TappedPair;
  let provider: McpProvider;
  let caller: McpCaller;
  let tools: McpServerHandler;
  let hung: ((signal: AbortSignal) => void) | undefined;

  beforeEach(() => {
    hop = tappedPair();
    provider = new McpProvider();
    provider.serve(hop.right);
    caller = new McpCaller(hop.left, { clientInfo: { name: 'spec-agent', version: '1.0.0' } });
    caller.listen(hop.left);
    hung = undefined;
    tools = mcpServerHandler(() => specTools((signal) => hung?.(signal)));
    provider.register({ name: 'tools', serverId: 'tools', handler: tools.handler });
  });
  afterEach(async () => {
    await tools.close();
    await hop.close();
  });

  it('answers server/discover, tools/list and tools/call at revision 2026-07-28 without MCP initialize', async () => {
    const discover = await caller.request('tools', 'server/discover');
    expect(discover).to.have.nested.property('result.supportedVersions').that.deep.equals(['2026-07-28']);
    const list = await caller.request('tools', 'tools/list');
    expect(list).to.have.nested.property('result.tools').that.is.an('array').with.lengthOf(3);
    const call = await caller.request('tools', 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
    expect(call).to.deep.equal({
      result: {
        content: [{ type: 'text', text: 'hi' }],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
      },
    });
  });

  it("keeps the library's MCP errors inside the carrier: unknown tool, unknown method, a method no header can name; bad arguments are a tool error", async () => {
    expect(await caller.request('tools', 'tools/call', { name: 'nope', arguments: {} })).to.have.nested.property('error.code', -32602);
    expect(await caller.request('tools', 'tools/call', { name: 'echo', arguments: { text: 1 } })).to.have.nested.property(
      'result.isError',
      true,
    );
    expect(await caller.request('tools', 'bogus/method')).to.have.nested.property('error.code', -32601);
    expect(await caller.request('tools', 'tools/liste✓')).to.deep.equal({
      error: { code: -32601, message: 'Method not found: tools/liste✓' },
    });
  });

  it("sends the tool's progress notifications to the caller before the answer", async () => {
    const received: McpNotification[] = [];
    const outcome = await caller.request(
      'tools',
      'tools/call',
      { name: 'progress', arguments: {}, _meta: { progressToken: 'p-1' } },
      { onNotification: (notification) => received.push(notification) },
    );
    expect(outcome).to.have.nested.property('result.content[0].text', 'done');
    expect(received).to.deep.equal([
      { method: 'notifications/progress', params: { progressToken: 'p-1', progress: 1, total: 2 } },
      { method: 'notifications/progress', params: { progressToken: 'p-1', progress: 2, total: 2 } },
    ]);
  });

  it("aborts the tool's ctx.mcpReq.signal when the caller cancels, and the caller gets -32800", async () => {
    const started = deferred<AbortSignal>();
    hung = started.resolve;
    const controller = new AbortController();
    const call = caller.request('tools', 'tools/call', { name: 'hang', arguments: {} }, { signal: controller.signal });
    const signal = await started.promise;
    controller.abort();
    expect(await rejectionOf(call)).to.deep.include({ code: -32800 });
    expect(signal.aborted).to.equal(true);
  });

  it('gets a prompt whose name is not ASCII (sent in Mcp-Name as =?base64?…?=)', async () => {
    const unicode = mcpServerHandler(() => {
      const server = new McpServer(SERVER_INFO);
      server.registerPrompt('grüße', {}, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'hallo' } }] }));
      return server;
    });
    provider.register({ name: 'unicode', serverId: 'unicode', handler: unicode.handler });
    try {
      const outcome = await caller.request('unicode', 'prompts/get', { name: 'grüße' });
      expect(outcome).to.have.nested.property('result.messages[0].content.text', 'hallo');
    } finally {
      await unicode.close();
    }
  });

  it('answers equal requestIds from two callers at once, each with its own result (one handler, two providers)', async () => {
    const other = tappedPair();
    const otherProvider = new McpProvider();
    otherProvider.serve(other.right);
    otherProvider.register({ name: 'tools', serverId: 'tools', handler: tools.handler });
    const otherCaller = new McpCaller(other.left);
    try {
      const [a, b] = await Promise.all([
        caller.request('tools', 'tools/call', { name: 'echo', arguments: { text: 'a' } }, { requestId: 'same' }),
        otherCaller.request('tools', 'tools/call', { name: 'echo', arguments: { text: 'b' } }, { requestId: 'same' }),
      ]);
      expect(a).to.have.nested.property('result.content[0].text', 'a');
      expect(b).to.have.nested.property('result.content[0].text', 'b');
    } finally {
      await other.close();
    }
  });

  it('passes the request context to the factory', async () => {
    const seen: string[] = [];
    const traced = mcpServerHandler((context) => {
      seen.push(`${context.serverId} ${context.requestId} ${context.method} ${JSON.stringify(context.clientInfo)}`);
      return specTools();
    });
    provider.register({ name: 'traced', serverId: 'traced', handler: traced.handler });
    try {
      await caller.request('traced', 'tools/list', undefined, { requestId: 'r-7' });
      expect(seen).to.deep.equal(['traced r-7 tools/list {"name":"spec-agent","version":"1.0.0"}']);
    } finally {
      await traced.close();
    }
  });

  it('frees every slot after 200 cancelled subscriptions/listen streams, with collections before the cancels', async function () {
    this.timeout(60000);
    const counted = mcpServerHandler(() => specTools());
    const running = new Set<Promise<unknown>>();
    provider.register({
      name: 'listen',
      serverId: 'listen',
      handler: (context) => {
        const outcome = Promise.resolve(counted.handler(context));
        const settled: Promise<boolean> = outcome.then(
          () => running.delete(settled),
          () => running.delete(settled),
        );
        running.add(settled);
        return outcome;
      },
    });
    try {
      // Four batches of 50 (the server has 64 slots): open, collect garbage, cancel, see them all settle.
      for (let batch = 0; batch < 4; batch++) {
        const listens = await openListens(caller, 50);
        await collectGarbage();
        for (const listen of listens) listen.controller.abort();
        expect(await unsettledAfter(running, 10_000), `exchanges of batch ${batch + 1} still running`).to.equal(0);
        for (const listen of listens) expect(await rejectionOf(listen.answer)).to.deep.include({ code: -32800 });
      }
      // Every slot is free: 64 listens at once are all acknowledged.
      const full = await openListens(caller, 64);
      for (const listen of full) listen.controller.abort();
      await Promise.all(full.map((listen) => listen.answer.catch(() => undefined)));
      const call = await caller.request('listen', 'tools/call', { name: 'echo', arguments: { text: 'free' } });
      expect(call).to.have.nested.property('result.content[0].text', 'free');
    } finally {
      await counted.close();
    }
  });

  it("loading acp-wire/mcp does not load the MCP server library (it is required on mcpServerHandler's first call)", () => {
    const script = [
      "require('./lib/mcp');",
      "const loaded = () => Object.keys(require.cache).some((file) => file.includes('@modelcontextprotocol'));",
      'const before = loaded();',
      "require('./lib/mcp').mcpServerHandler(() => { throw new Error('unused'); });",
      'process.stdout.write(JSON.stringify({ before, after: loaded() }));',
    ].join('\n');
    const output = execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(JSON.parse(output)).to.deep.equal({ before: false, after: true });
  });
});

/** A `subscriptions/listen` in flight, and its controller. */
interface Listen {
  readonly controller: AbortController;
  readonly answer: Promise<unknown>;
}

/** Opens `count` listens on the `listen` server; resolves once each was acknowledged (fails on any other outcome). */
async function openListens(caller: McpCaller, count: number): Promise<Listen[]> {
  const listens = Array.from({ length: count }, () => {
    const controller = new AbortController();
    return { controller, ...listenUntilAcknowledged(caller, controller.signal) };
  });
  const outcomes = await Promise.all(listens.map((listen) => listen.acknowledged));
  expect(outcomes).to.deep.equal(Array(count).fill('acknowledged'));
  return listens;
}

/** How many of `running` are still unsettled once they all settled, or after `boundMs` (a guard far above the time they take). */
async function unsettledAfter(running: Set<Promise<unknown>>, boundMs: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)));
  await Promise.race([Promise.all([...running]), bound]);
  clearTimeout(timer);
  return running.size;
}

/** A `subscriptions/listen` that resolves `acknowledged` once the server acknowledged it (or `refused` if it was answered first). */
function listenUntilAcknowledged(caller: McpCaller, signal: AbortSignal): { acknowledged: Promise<string>; answer: Promise<unknown> } {
  let acknowledge!: (value: string) => void;
  const acknowledged = new Promise<string>((resolve) => (acknowledge = resolve));
  const answer = caller.request(
    'listen',
    'subscriptions/listen',
    { notifications: { toolsListChanged: true } },
    {
      signal,
      onNotification: (notification) => notification.method === 'notifications/subscriptions/acknowledged' && acknowledge('acknowledged'),
    },
  );
  answer.then(
    (outcome) => acknowledge(`answered ${JSON.stringify(outcome)}`),
    (error: unknown) => acknowledge(`refused ${JSON.stringify(error)}`),
  );
  return { acknowledged, answer };
}
