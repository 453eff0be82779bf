/**
 * The conductor through real processes: `node dist/bin/acp-wire.js conduct …` driven with raw
 * NDJSON, and the Conductor class with spawned components. Needs the build (the `before` hooks
 * build it when the compiled peers are missing or stale).
 */
import { expect } from 'chai';
import { CommandLineError, Conductor, RpcError, connectTcp, splitCommandLine, type Responder } from '../../lib';
import { spawnEarly, type EarlyProcessTree } from '../../lib/transports/process-tree';
import {
  AGENT_COMMAND,
  matrixProxyCommand,
  PASSTHROUGH_COMMAND,
  spawnConductor,
  traceJson,
  traceOf,
  traceRecorder,
} from '../helpers/chain';
import { CLIENT_INIT } from '../helpers/conformance-agent';
import type { LineReader } from '../helpers/lines';
import { hasMethod, isCancelFor, isResponseTo } from '../helpers/messages';
import { tappedPair, type TappedPair } from '../helpers/peers';
import { type SpawnedProcess, useBuild } from '../helpers/processes';

const TWO_PROXIES = ['--trace', PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND];
const INIT_LINE = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":${JSON.stringify(CLIENT_INIT)}}`;

/** Spawns the conductor and completes `initialize` (id 0). */
async function startChain(args: readonly string[]): Promise<SpawnedProcess> {
  const chain = spawnConductor(args);
  chain.send(INIT_LINE);
  const answer = await chain.stdout.take(isResponseTo(0));
  expect(answer).to.match(/^\{"jsonrpc":"2\.0","id":0,"result":\{"protocolVersion":2,/);
  return chain;
}

/** The id a request named `method` had on one hop, read from the `--trace` output. */
async function idOnHop(chain: SpawnedProcess, hop: string, method: string): Promise<unknown> {
  return traceJson(await chain.stderr.take(traceOf(hop, '->', (json) => json.method === method))).id;
}

/** The agent's `_test/received` notifications. */
async function receivedByAgent(chain: SpawnedProcess, id: number): Promise<unknown[]> {
  const answer = JSON.parse(await chain.request(id, '_test/received')) as { result: unknown };
  return (answer.result as { notifications: unknown[] }).notifications;
}

/** Cancels the conductor sent on one hop (`->`), from the trace so far. */
function cancelsSentOn(stderr: LineReader, hop: string): Record<string, unknown>[] {
  return stderr.matching(traceOf(hop, '->', isCancelFor())).map(traceJson);
}

describe('acp-wire conduct', function () {
  this.timeout(30000);
  useBuild();

  let chain: SpawnedProcess | undefined;
  afterEach(async () => {
    await chain?.stop(); // at once when it already exited
    chain = undefined;
  });

  describe('client → conductor → proxy → proxy → agent', () => {
    it('sends proxy/initialize to each proxy and initialize to the agent', async () => {
      chain = await startChain(TWO_PROXIES);
      const params = JSON.stringify(CLIENT_INIT);
      expect(await chain.stderr.take(traceOf('proxy1', '->', hasMethod('proxy/initialize')))).to.contain(`"params":${params}`);
      expect(await chain.stderr.take(traceOf('proxy2', '->', hasMethod('proxy/initialize')))).to.contain(`"params":${params}`);
      expect(await chain.stderr.take(traceOf('agent', '->', hasMethod('initialize')))).to.contain(`"params":${params}`);
    });

    it('gives a forwarded request a new id on every hop and routes the answer back byte for byte', async () => {
      chain = await startChain(TWO_PROXIES);
      chain.send('{"jsonrpc":"2.0","id":"client-7","method":"_test/echo","params":{"x":[1,"ü"]}}');
      expect(await chain.stdout.take(isResponseTo('client-7'))).to.equal('{"jsonrpc":"2.0","id":"client-7","result":{"x":[1,"ü"]}}');
      for (const hop of ['proxy1', 'proxy2', 'agent']) expect(await idOnHop(chain, hop, '_test/echo')).to.be.a('number');
    });

    it('delivers a client cancel to the agent exactly once with the agent-side id, and -32800 flows back', async () => {
      chain = await startChain(TWO_PROXIES);
      chain.send({ jsonrpc: '2.0', id: 5, method: '_test/sleep', params: { ms: 60000 } });
      const agentId = await idOnHop(chain, 'agent', '_test/sleep');
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 5 } });
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 5 } });
      expect(await chain.stdout.take(isResponseTo(5))).to.equal(
        '{"jsonrpc":"2.0","id":5,"error":{"code":-32800,"message":"Request cancelled"}}',
      );
      expect(await receivedByAgent(chain, 6)).to.deep.equal([{ method: '$/cancel_request', params: { requestId: agentId } }]);
      for (const hop of ['proxy1', 'proxy2', 'agent']) {
        const hopId = traceJson(chain.stderr.matching(traceOf(hop, '->', hasMethod('_test/sleep')))[0]!).id;
        expect(cancelsSentOn(chain.stderr, hop), hop).to.deep.equal([
          { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: hopId } },
        ]);
      }
    });

    it("translates the agent's cancel of its own request to the client hop by hop", async () => {
      chain = await startChain(TWO_PROXIES);
      chain.send({
        jsonrpc: '2.0',
        id: 8,
        method: '_test/callClient',
        params: { method: 'client/ask', params: { q: 1 }, cancelAfterMs: 10 },
      });
      const ask = JSON.parse(await chain.stdout.take(hasMethod('client/ask'))) as { id: unknown; params: unknown };
      expect(ask.params).to.deep.equal({ q: 1 });
      const cancel = await chain.stdout.take(hasMethod('$/cancel_request'));
      expect(cancel).to.equal(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(ask.id)}}}`);
      chain.send({ jsonrpc: '2.0', id: ask.id, error: { code: -32800, message: 'Request cancelled' } });
      expect(await chain.stdout.take(isResponseTo(8))).to.equal(
        '{"jsonrpc":"2.0","id":8,"result":{"response":{"code":-32800,"message":"Request cancelled"}}}',
      );
      expect(chain.stdout.matching(hasMethod('$/cancel_request'))).to.have.length(1);
      for (const hop of ['proxy2', 'proxy1']) expect(cancelsSentOn(chain.stderr, hop), hop).to.have.length(1);
    });

    it('does not forward a cancel for a finished request', async () => {
      chain = await startChain(TWO_PROXIES);
      expect(JSON.parse(await chain.request(3, '_test/echo', [1]))).to.deep.equal({ jsonrpc: '2.0', id: 3, result: [1] });
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 3 } });
      expect(await receivedByAgent(chain, 4)).to.deep.equal([]);
      for (const hop of ['proxy1', 'proxy2', 'agent']) expect(cancelsSentOn(chain.stderr, hop), hop).to.deep.equal([]);
    });

    it('accepts a cancel wrapped in proxy/successor from the client and re-issues it plain', async () => {
      chain = await startChain(TWO_PROXIES);
      chain.send({ jsonrpc: '2.0', id: 5, method: '_test/sleep', params: { ms: 60000 } });
      const agentId = await idOnHop(chain, 'agent', '_test/sleep');
      chain.send({ jsonrpc: '2.0', method: 'proxy/successor', params: { method: '$/cancel_request', params: { requestId: 5 } } });
      expect(await chain.stdout.take(isResponseTo(5))).to.equal(
        '{"jsonrpc":"2.0","id":5,"error":{"code":-32800,"message":"Request cancelled"}}',
      );
      expect(await receivedByAgent(chain, 6)).to.deep.equal([{ method: '$/cancel_request', params: { requestId: agentId } }]);
    });

    it('drops raw cancels that name no request on the next hop, plain or wrapped, instead of forwarding them', async () => {
      chain = await startChain(TWO_PROXIES);
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      chain.send({ jsonrpc: '2.0', method: '_proxy/successor', params: { method: '$/cancel_request', params: { requestId: 1 } } });
      expect(await receivedByAgent(chain, 2)).to.deep.equal([]);
      for (const hop of ['proxy1', 'proxy2', 'agent']) expect(cancelsSentOn(chain.stderr, hop), hop).to.deep.equal([]);
    });

    it('passes notifications on in both directions, plain at both ends', async () => {
      chain = await startChain(TWO_PROXIES);
      chain.send({ jsonrpc: '2.0', method: '_test/note', params: { n: 1 } });
      expect(await receivedByAgent(chain, 1)).to.deep.equal([{ method: '_test/note', params: { n: 1 } }]);
      const session = JSON.parse(await chain.request(2, 'session/new', { cwd: '/', mcpServers: [] })) as { result: unknown };
      const { sessionId } = session.result as { sessionId: string };
      chain.send({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hi' }] } });
      const update = JSON.parse(await chain.stdout.take(hasMethod('session/update'))) as { params: { sessionId: string } };
      expect(update).to.not.have.property('id');
      expect(update.params.sessionId).to.equal(sessionId);
      await chain.stdout.take(isResponseTo(3));
    });

    it("refuses the client's proxy/initialize with -32600", async () => {
      chain = await startChain(TWO_PROXIES);
      chain.send('{"jsonrpc":"2.0","id":9,"method":"proxy/initialize","params":{}}');
      expect(await chain.stdout.take(isResponseTo(9))).to.equal(
        '{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request","data":"`proxy/initialize` is not accepted from a client"}}',
      );
    });

    it("exits 0 once the client's stdin ends, having written nothing but protocol lines to stdout", async () => {
      chain = await startChain(TWO_PROXIES);
      expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
      for (const line of chain.stdout.lines) expect(() => JSON.parse(line) as unknown, line).to.not.throw();
    });
  });

  describe('--tcp', () => {
    it('serves a chain per TCP client, prints `listening PORT`, and exits 0 when stdin ends', async () => {
      chain = spawnConductor(['--tcp', '0', AGENT_COMMAND]);
      const port = Number(/^listening (\d+)$/.exec(await chain.stdout.take())![1]);
      const client = await connectTcp({ port });
      await client.sendRequest('initialize', CLIENT_INIT);
      expect(await client.sendRequest('_test/echo', { over: 'tcp' })).to.deep.equal({ over: 'tcp' });
      await client.close();
      expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
      expect(chain.stdout.lines).to.deep.equal([`listening ${port}`]);
    });
  });

  describe('bad usage', () => {
    for (const [what, args, problem] of [
      ['no command', [], 'give at least the agent command'],
      ['an unterminated quote', ['node "agent.js'], 'cannot split the command "node \\"agent.js": a double quote is not closed'],
      ['an unknown option', ['--nope', AGENT_COMMAND], 'unknown option --nope'],
      ['a bad port', ['--tcp', 'x', AGENT_COMMAND], '--tcp needs a port from 0 to 65535, got "x"'],
    ] as const) {
      it(`exits 2 with one line naming the problem on stderr for ${what}, starting nothing`, async () => {
        chain = spawnConductor(args);
        expect(await chain.exited).to.deep.equal({ code: 2, signal: null });
        expect(chain.stderr.lines).to.deep.equal([`acp-wire conduct: ${problem} (see acp-wire conduct --help)`]);
        expect(chain.stdout.lines).to.deep.equal([]);
      });
    }
  });

  describe('with zero proxies', () => {
    it('sends initialize to the agent and routes requests to it', async () => {
      chain = await startChain(['--trace', AGENT_COMMAND]);
      expect(await chain.stderr.take(traceOf('agent', '->', hasMethod('initialize')))).to.contain('"method":"initialize"');
      expect(JSON.parse(await chain.request(1, '_test/echo', { a: 1 }))).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { a: 1 } });
    });
  });

  describe('when a component dies mid-request', () => {
    it('answers the pending request with an error, names the component on stderr and exits 1', async () => {
      const dying = `node -e "process.stdin.once('data', () => process.exit(3))"`;
      chain = spawnConductor([dying]);
      chain.send(INIT_LINE);
      expect(await chain.stdout.take(isResponseTo(0))).to.equal(
        '{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"Internal error","data":{"reason":"incoming_transport_closed","method":"initialize"}}}',
      );
      expect(await chain.exited).to.deep.equal({ code: 1, signal: null });
      expect(chain.stderr.lines).to.include(`acp-wire conduct: agent (${dying}) exited with code 3; the chain was shut down`);
    });
  });

  describe('the decision matrix, through a real proxy process', () => {
    async function matrixChain(mode: string): Promise<SpawnedProcess> {
      return startChain(['--trace', matrixProxyCommand(mode), AGENT_COMMAND]);
    }

    it('handle locally: the proxy answers -32800 and the agent never sees the request', async () => {
      chain = await matrixChain('local');
      chain.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60000 } });
      await chain.stderr.take(traceOf('proxy1', '->', hasMethod('_test/sleep')));
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}',
      );
      expect(await receivedByAgent(chain, 2)).to.deep.equal([]);
      expect(chain.stderr.matching(traceOf('agent', '->', hasMethod('_test/sleep')))).to.deep.equal([]);
    });

    it("propagate (forwardResponseTo): one cancel reaches the agent and the agent's data answer flows back", async () => {
      chain = await matrixChain('propagate');
      chain.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60000 } });
      const agentId = await idOnHop(chain, 'agent', '_test/sleep');
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      expect(await chain.stdout.take(isResponseTo(1))).to.equal('{"jsonrpc":"2.0","id":1,"result":{"partial":true}}');
      expect(await receivedByAgent(chain, 2)).to.deep.equal([{ method: '$/cancel_request', params: { requestId: agentId } }]);
    });

    it('propagate with custom logic (forwardCancellationFrom): one cancel reaches the agent, the proxy shapes the answer', async () => {
      chain = await matrixChain('custom');
      chain.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60000 } });
      const agentId = await idOnHop(chain, 'agent', '_test/sleep');
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"via":"matrix-proxy","answer":{"partial":true}}}',
      );
      expect(await receivedByAgent(chain, 2)).to.deep.equal([{ method: '$/cancel_request', params: { requestId: agentId } }]);
    });

    it('absorb: the agent sees no cancel and the client gets the full answer', async () => {
      chain = await matrixChain('absorb');
      chain.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 300 } });
      await idOnHop(chain, 'agent', '_test/sleep');
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      expect(await chain.stdout.take(isResponseTo(1))).to.equal('{"jsonrpc":"2.0","id":1,"result":{"slept":300}}');
      expect(await receivedByAgent(chain, 2)).to.deep.equal([]);
    });

    it('route it yourself ($/cancel_request handler + kept handle): one cancel reaches the agent, -32800 flows back', async () => {
      chain = await matrixChain('route');
      chain.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60000 } });
      const agentId = await idOnHop(chain, 'agent', '_test/sleep');
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}',
      );
      expect(await receivedByAgent(chain, 2)).to.deep.equal([{ method: '$/cancel_request', params: { requestId: agentId } }]);
    });
  });
});

describe('Conductor', function () {
  this.timeout(30000);
  useBuild();

  describe('with spawned components', () => {
    let client: TappedPair;
    let conductor: Conductor;
    let trace: ReturnType<typeof traceRecorder>;
    beforeEach(async () => {
      client = tappedPair();
      trace = traceRecorder();
      conductor = new Conductor({
        client: client.right,
        components: [PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND],
        logger: trace.logger,
      });
      await client.left.sendRequest('initialize', CLIENT_INIT);
    });
    afterEach(async () => {
      await conductor.close();
      await client.close();
      trace.stream.end();
    });

    for (const [index, name] of [
      [1, 'proxy2'],
      [2, 'agent'],
    ] as const) {
      it(`answers the client's pending request -32603 incoming_transport_closed when ${name} is killed mid-request`, async () => {
        const sent = client.left.sendRequest('_test/sleep', { ms: 60000 });
        await trace.lines.take(traceOf('agent', '->', hasMethod('_test/sleep')));
        conductor.components[index]!.child!.kill('SIGKILL');
        const error = await sent.then(undefined, (e: unknown) => e);
        expect(error)
          .to.be.instanceOf(RpcError)
          .and.deep.include({
            code: -32603,
            data: { reason: 'incoming_transport_closed', method: '_test/sleep' },
          });
        const outcome = await conductor.closed;
        expect(outcome).to.deep.include({ reason: 'component ended', exit: { code: null, signal: 'SIGKILL' } });
        expect(outcome.component!.name).to.equal(name);
        expect(outcome.message).to.equal(`${name} (${conductor.components[index]!.description}) was killed by SIGKILL`);
      });
    }

    it('closes every connection and reaps every child when the client goes away', async () => {
      void client.left.close();
      const outcome = await conductor.closed;
      expect(outcome).to.deep.equal({ reason: 'client closed', message: 'the client went away' });
      const exits = await Promise.all(conductor.components.map((component) => component.exited));
      expect(exits).to.deep.equal([
        { code: 0, signal: null },
        { code: 0, signal: null },
        { code: 0, signal: null },
      ]);
      expect(conductor.components.every((component) => component.connection.isClosed)).to.equal(true);
    });
  });

  describe('with processes spawned already (`spawned`, as `acp-wire conduct` hands them over)', () => {
    /** Spawns `command` early; `pids[index]` gets its pid when the tree is taken. */
    function spawnedEarly(command: string, pids: (number | undefined)[], index: number): EarlyProcessTree {
      const [program, ...args] = splitCommandLine(command);
      const tree = spawnEarly(program!, args);
      return {
        ...tree,
        take: () => {
          const taken = tree.take();
          pids[index] = taken.child.pid;
          return taken;
        },
      };
    }

    it('takes each process instead of spawning its command again, and routes through it', async () => {
      const client = tappedPair();
      const pids: (number | undefined)[] = [];
      const spawned = [PASSTHROUGH_COMMAND, AGENT_COMMAND].map((command, index) => spawnedEarly(command, pids, index));
      const conductor = new Conductor({ client: client.right, components: [PASSTHROUGH_COMMAND, AGENT_COMMAND], spawned });
      try {
        const answer = (await client.left.sendRequest('initialize', CLIENT_INIT)) as { protocolVersion: number };
        expect(answer.protocolVersion).to.equal(2);
        expect(pids.filter((pid) => pid !== undefined)).to.have.length(2);
        expect(conductor.components.map((component) => component.child!.pid)).to.deep.equal(pids);
      } finally {
        await conductor.close();
        await client.close();
      }
    });

    it('throws TypeError for a process that is not the command its component names, taking nothing', async () => {
      const client = tappedPair();
      const pids: (number | undefined)[] = [];
      const spawned = [spawnedEarly(PASSTHROUGH_COMMAND, pids, 0)];
      expect(() => new Conductor({ client: client.right, components: [AGENT_COMMAND], spawned })).to.throw(
        TypeError,
        'the process spawned for component 0 is not the one it names',
      );
      expect(pids).to.deep.equal([]);
      await spawned[0]!.discard(2000);
      await client.close();
    });
  });

  describe('with in-process components', () => {
    let client: TappedPair;
    let proxy: TappedPair;
    let agent: TappedPair;
    let conductor: Conductor;
    beforeEach(() => {
      [client, proxy, agent] = [tappedPair(), tappedPair(), tappedPair()];
      conductor = new Conductor({
        client: client.right,
        components: [{ connection: proxy.left, name: 'p' }, { connection: agent.left }],
      });
    });
    afterEach(async () => {
      await conductor.close();
      await Promise.all([client.close(), proxy.close(), agent.close()]);
    });

    it("refuses the client's proxy/successor request with -32600", async () => {
      const error = await client.left.sendRequest('proxy/successor', { method: 'x' }).then(undefined, (e: unknown) => e);
      expect(error).to.deep.include({ code: -32600, data: '`proxy/successor` is not accepted from a client' });
    });

    it("refuses the agent's proxy/successor request with -32600", async () => {
      const error = await agent.right.sendRequest('proxy/successor', { method: 'x' }).then(undefined, (e: unknown) => e);
      expect(error).to.deep.include({ code: -32600 });
      expect((error as RpcError).data).to.match(/agent has no successor/);
    });

    it("answers a proxy's malformed envelope request with -32602", async () => {
      const error = await proxy.right.sendRequest('proxy/successor', { method: ['x'] }).then(undefined, (e: unknown) => e);
      expect(error).to.deep.include({ code: -32602, data: 'malformed `proxy/successor` envelope' });
    });

    it("unwraps a proxy's envelope request and sends it to the agent plain, initialize included", async () => {
      agent.right.onRequest('initialize', (params) => ({ got: params }));
      expect(await proxy.right.sendRequest('proxy/successor', { method: 'initialize', params: { v: 1 } })).to.deep.equal({ got: { v: 1 } });
      expect(await agent.fromLeft.take()).to.equal('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"v":1}}');
    });

    it("wraps the agent's request to its predecessor proxy in proxy/successor", async () => {
      proxy.right.onRequest('proxy/successor', (params) => ({ envelope: params }));
      expect(await agent.right.sendRequest('fs/read', { p: 1 })).to.deep.equal({ envelope: { method: 'fs/read', params: { p: 1 } } });
    });

    it("sends the client's initialize to the first proxy as proxy/initialize", async () => {
      proxy.right.onRequest('proxy/initialize', () => 'proxy initialized');
      expect(await client.left.sendRequest('initialize', {})).to.equal('proxy initialized');
    });

    it('reports the component that closed its connection and answers pending requests', async () => {
      proxy.right.onRequest('slow', (_params, responder: Responder) => void responder);
      const sent = client.left.sendRequest('slow');
      await proxy.fromLeft.take(hasMethod('slow'));
      void proxy.right.close();
      expect(await sent.then(undefined, (e: unknown) => e)).to.deep.include({ code: -32603 });
      expect(await conductor.closed).to.deep.include({ reason: 'component ended', message: 'p (in-process) closed its connection' });
    });
  });

  describe('constructor', () => {
    it('throws CommandLineError for a command it cannot split, before starting anything', () => {
      const client = tappedPair();
      expect(() => new Conductor({ client: client.right, components: ['node "unterminated'] })).to.throw(CommandLineError);
      return client.close();
    });

    it('throws TypeError without components', () => {
      const client = tappedPair();
      expect(() => new Conductor({ client: client.right, components: [] })).to.throw(TypeError, /at least the agent/);
      return client.close();
    });
  });
});
