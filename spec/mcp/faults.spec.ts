/**
 * MCP-over-ACP when things go wrong, in process through a Conductor: the proxy that provides a
 * server dies mid-call, a tool never answers, and a thousand calls at once through two proxies.
 */
import { expect } from 'chai';
import { Conductor, type Connection, ConnectionClosedError, ProxyComponent, RpcError } from '../../lib';
import { McpCaller, McpProvider, type McpRequestHandler } from '../../lib/mcp';
import { deferred, rejectionOf } from '../helpers/async';
import { tappedPair, type TappedPair } from '../helpers/peers';

/** client ⇄ Conductor ⇄ proxies (each serving its own provider) ⇄ agent, all acp-wire, in process. */
interface Chain {
  readonly conductor: Conductor;
  readonly proxyHops: readonly TappedPair[];
  readonly providers: readonly McpProvider[];
  readonly caller: McpCaller;
  /** The agent's connection. */
  readonly agent: Connection;
  close(): Promise<void>;
}

async function chainOf(proxies: number): Promise<Chain> {
  const clientHop = tappedPair();
  const proxyHops = Array.from({ length: proxies }, () => tappedPair());
  const agentHop = tappedPair();
  const conductor = new Conductor({
    client: clientHop.right,
    components: [...proxyHops.map((hop) => ({ connection: hop.left })), { connection: agentHop.left }],
  });
  const providers = proxyHops.map((hop) => {
    const provider = new McpProvider();
    new ProxyComponent(hop.right).serveMcp(provider);
    return provider;
  });
  const agent = agentHop.right;
  agent.onRequest('initialize', () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] }));
  const caller = new McpCaller(agent);
  caller.listen(agent);
  await clientHop.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
  return {
    conductor,
    proxyHops,
    providers,
    caller,
    agent,
    close: async () => {
      await conductor.close();
      await Promise.all([clientHop.close(), agentHop.close(), ...proxyHops.map((hop) => hop.close())]);
    },
  };
}

/** A handler that starts and then waits for its signal; `started` resolves with that signal. */
function hangingHandler(): { handler: McpRequestHandler; started: Promise<AbortSignal> } {
  const started = deferred<AbortSignal>();
  return {
    started: started.promise,
    handler: ({ signal }) =>
      new Promise((_resolve, reject) => {
        started.resolve(signal);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  };
}

describe('MCP-over-ACP faults (through a Conductor, in process)', () => {
  let chain: Chain | undefined;
  afterEach(async () => {
    await chain?.close();
    chain = undefined;
  });

  it("rejects the agent's call cleanly when the providing proxy's connection closes mid-call, and the conductor reports that proxy", async () => {
    chain = await chainOf(1);
    const { handler, started } = hangingHandler();
    chain.providers[0]!.register({ name: 'tools', serverId: 'tools', handler });
    const call = chain.caller.request('tools', 'tools/call', { name: 'x' });
    const signal = await started;
    await chain.proxyHops[0]!.right.close();
    const error = await rejectionOf(call);
    expect(error instanceof RpcError || error instanceof ConnectionClosedError, String(error)).to.equal(true);
    if (error instanceof RpcError) expect(error.code).to.equal(-32603);
    expect(signal.aborted).to.equal(true);
    const outcome = await chain.conductor.closed;
    expect(outcome).to.deep.include({ reason: 'component ended' });
    expect(outcome.component?.name).to.equal('proxy1');
  });

  for (const [how, signalOf] of [
    ['cancels', (controller: AbortController) => controller.signal],
    ['times out with AbortSignal.timeout()', () => AbortSignal.timeout(20)],
  ] as const) {
    it(`ends a tool that never answers when the caller ${how}: -32800, and the server's active slot is free again`, async () => {
      chain = await chainOf(2);
      const hanging = hangingHandler();
      let calls = 0;
      const registration = chain.providers[1]!.register({
        name: 'tools',
        serverId: 'tools',
        maxActiveRequests: 1,
        handler: (context) => (++calls === 1 ? hanging.handler(context) : { result: 'ok' }),
      });
      const controller = new AbortController();
      const call = chain.caller.request('tools', 'tools/call', {}, { signal: signalOf(controller) });
      const signal = await hanging.started;
      controller.abort();
      expect(await rejectionOf(call)).to.deep.include({ code: -32800 });
      expect(signal.aborted).to.equal(true);
      // One slot: the second request is served only because the first one left the active table.
      expect(await chain.caller.request('tools', 'tools/call')).to.deep.equal({ result: 'ok' });
      await registration.dispose();
    });
  }

  it('answers 1,000 concurrent calls through two proxies exactly once each, with the heap roughly flat afterwards and no process warning', async () => {
    chain = await chainOf(2);
    const handler: McpRequestHandler = async ({ serverId, requestId }) => {
      await new Promise(setImmediate);
      return { result: { serverId, requestId } };
    };
    chain.providers[0]!.register({ name: 'near', serverId: 'near', handler, maxActiveRequests: 1000 });
    chain.providers[1]!.register({ name: 'far', serverId: 'far', handler, maxActiveRequests: 1000 });
    const caller = chain.caller;
    const warnings: unknown[] = [];
    chain.agent.on('warning', (warning) => warnings.push(warning));
    const processWarnings: string[] = [];
    const onProcessWarning = (warning: Error): void => void processWarnings.push(warning.name);
    process.on('warning', onProcessWarning);
    const burst = async (round: number): Promise<void> => {
      const calls = Array.from({ length: 1000 }, (_, i) => {
        const serverId = i % 2 === 0 ? 'near' : 'far';
        const requestId = `r${round}-${i}`;
        return caller.request(serverId, 'tools/call', {}, { requestId }).then((outcome) => ({ outcome, serverId, requestId }));
      });
      const answers = await Promise.all(calls);
      expect(new Set(answers.map((answer) => answer.requestId)).size).to.equal(1000);
      for (const { outcome, serverId, requestId } of answers) expect(outcome).to.deep.equal({ result: { serverId, requestId } });
    };
    await burst(0);
    global.gc!();
    const before = process.memoryUsage().heapUsed;
    await burst(1);
    await burst(2);
    global.gc!();
    const growth = process.memoryUsage().heapUsed - before;
    await new Promise(setImmediate);
    process.off('warning', onProcessWarning);
    // Hundreds of requests active at one server add no listener to a shared signal.
    expect(processWarnings).to.deep.equal([]);
    expect(growth).to.be.below(20 * 1024 * 1024);
    // A second answer to any request would be a warning: a response that matches no pending request.
    expect(warnings).to.deep.equal([]);
  });
});
