/**
 * listenConductor(): a chain per TCP client, started on the client's first byte, bounded in
 * number and idle time; components named by a URL connected per chain.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import {
  ComponentConnectionError,
  ConnectionClosedError,
  connectTcp,
  createConnectionPair,
  listenConductor,
  listenTcp,
  type Conductor,
  type ConductorListener,
  type ConductorListenerOptions,
  type Connection,
  type LogLevel,
} from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { rejectionOf } from '../helpers/async';
import { AGENT_COMMAND } from '../helpers/chain';
import { CLIENT_INIT } from '../helpers/conformance-agent';
import { useBuild } from '../helpers/processes';

async function rawSocket(port: number): Promise<Socket> {
  const socket = createConnection({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  return socket;
}

describe('listenConductor()', function () {
  this.timeout(30000);
  useBuild();

  let listener: ConductorListener | undefined;
  const sockets: Socket[] = [];
  const clients: Connection[] = [];
  const started: Conductor[] = [];
  const records: string[] = [];
  const logger = (name: string) => ({
    traces: false,
    log: (level: LogLevel, message: string) => void records.push(`${name} ${level} ${message}`),
  });

  async function listen(options: Partial<ConductorListenerOptions> = {}): Promise<ConductorListener> {
    listener = await listenConductor(
      { port: 0 },
      { components: [AGENT_COMMAND], logger, onChain: (chain) => started.push(chain), ...options },
    );
    return listener;
  }

  async function client(): Promise<Connection> {
    const connection = await connectTcp({ port: listener!.port });
    clients.push(connection);
    return connection;
  }

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(clients.splice(0).map((connection) => connection.close()));
    await listener?.close();
    listener = undefined;
    started.length = 0;
    records.length = 0;
  });

  it('starts no chain for clients that never send a byte, and one for a client that does', async () => {
    await listen();
    for (let i = 0; i < 10; i++) sockets.push(await rawSocket(listener!.port));
    const talker = await client();
    // Accepted in order: once the talker is answered, the ten silent sockets have been accepted.
    expect(await talker.sendRequest('initialize', CLIENT_INIT)).to.have.property('protocolVersion', 2);
    expect(started).to.have.length(1);
    expect(listener!.chains.size).to.equal(1);
  });

  it('refuses the client beyond maxChains, with a warn line naming it', async () => {
    await listen({ maxChains: 1 });
    const first = await client();
    await first.sendRequest('initialize', CLIENT_INIT);
    const second = await rawSocket(listener!.port);
    sockets.push(second);
    const port = second.localPort;
    await once(second, 'close');
    // (The chain's own debug lines, such as the negotiated version, are not the listener's.)
    expect(records.filter((record) => / (warn|error) /.test(record))).to.deep.equal([
      `conductor warn refused a client from 127.0.0.1:${port}: client limit reached (1 open)`,
    ]);
    expect(started).to.have.length(1);
  });

  it('closes a client that never sends a byte after idleTimeoutMs, starting nothing', async () => {
    await listen({ idleTimeoutMs: 20 });
    const silent = await rawSocket(listener!.port);
    sockets.push(silent);
    await once(silent, 'close');
    expect(started).to.deep.equal([]);
    expect(records.filter((record) => record.includes('idle'))).to.have.length(1);
  });

  it('shuts the chain of an idle client down, reaping its agent', async () => {
    // Far above the client's gap between connecting and sending initialize (closed before it, the client would be silent, not idle).
    await listen({ idleTimeoutMs: 300 });
    const talker = await client();
    await talker.sendRequest('initialize', CLIENT_INIT);
    const outcome = await started[0]!.closed;
    expect(outcome.reason).to.equal('closed locally');
    expect(await started[0]!.components[0]!.exited).to.deep.equal({ code: 0, signal: null });
    expect(listener!.chains.size).to.equal(0);
  });

  it('keeps a chain whose client has a request in flight past idleTimeoutMs', async () => {
    // A timeout far above the client's own gaps (connect to first byte, answer to next request),
    // which a loaded machine stretches: a client silent that long is idle by right.
    await listen({ idleTimeoutMs: 1000 });
    const talker = await client();
    await talker.sendRequest('initialize', CLIENT_INIT);
    expect(await talker.sendRequest('_test/sleep', { ms: 2000 })).to.deep.equal({ slept: 2000 });
  });

  it('closes every chain on [Symbol.asyncDispose]()', async () => {
    await listen();
    const talker = await client();
    await talker.sendRequest('initialize', CLIENT_INIT);
    await listener![Symbol.asyncDispose]();
    expect(listener!.chains.size).to.equal(0);
    expect(await started[0]!.components[0]!.exited).to.deep.equal({ code: 0, signal: null });
    expect(listener!.server.listening).to.equal(false);
  });

  it('throws TypeError for an in-process component and RangeError for bad bounds, before listening', () => {
    const [, agent] = createConnectionPair();
    expect(() => listenConductor({ port: 0 }, { components: [{ connection: agent }] })).to.throw(TypeError, /in-process/);
    expect(() => listenConductor({ port: 0 }, { components: [AGENT_COMMAND], maxChains: 0 })).to.throw(RangeError, /maxChains/);
    expect(() => listenConductor({ port: 0 }, { components: [AGENT_COMMAND], idleTimeoutMs: -1 })).to.throw(RangeError, /idleTimeoutMs/);
    expect(() => listenConductor({ port: 65536 }, { components: [AGENT_COMMAND] })).to.throw(RangeError, /port/);
    return agent.close();
  });

  describe('with a component named by a URL', () => {
    it("connects it afresh for each chain, before the client's first message is read", async () => {
      const agentConnections: Connection[] = [];
      await using agents = await listenTcp({ port: 0 }, (connection) => {
        agentConnections.push(connection);
        serveConformanceAgent(connection);
      });
      await listen({ components: [`tcp://127.0.0.1:${agents.port}`] });
      const first = await client();
      const second = await client();
      // The first message is sent before the agent is connected: it waits in the socket, and is answered.
      const answers = await Promise.all([first.sendRequest('initialize', CLIENT_INIT), second.sendRequest('initialize', CLIENT_INIT)]);
      expect(answers.map((answer) => (answer as { protocolVersion: number }).protocolVersion)).to.deep.equal([2, 2]);
      expect(agentConnections).to.have.length(2);
      expect(started.map((chain) => chain.components[0]!.name)).to.deep.equal(['agent', 'agent']);
      await first.close();
      await new Promise((resolve) => agentConnections[0]!.once('close', resolve));
      expect(agentConnections[1]!.isClosed).to.equal(false);
    });

    it('passes a ComponentConnectionError to onChainFailed and closes that client when it cannot be connected', async () => {
      const failures: unknown[] = [];
      const blocker = await listenTcp({ port: 0 }, () => undefined);
      const port = blocker.port;
      await blocker.close(); // nothing listens there now: the connection is refused
      await listen({ components: [`tcp://127.0.0.1:${port}`], onChainFailed: (error) => failures.push(error) });
      const talker = await client();
      const error = await rejectionOf(talker.sendRequest('initialize', CLIENT_INIT));
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(failures).to.have.length(1);
      expect(failures[0])
        .to.be.instanceOf(ComponentConnectionError)
        .and.include({ component: 'agent', url: `tcp://127.0.0.1:${port}`, code: 'ACP_WIRE_COMPONENT_CONNECTION' });
      expect((failures[0] as Error).cause).to.have.property('code', 'ECONNREFUSED');
      expect(started).to.deep.equal([]);
      expect(records.filter((record) => record.includes('error'))).to.deep.equal([]);
    });
  });
});
