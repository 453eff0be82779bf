/**
 * Network faults between a WebSocket client and server, injected by a TCP proxy on 127.0.0.1:
 * latency, a throughput cap, a reset in the middle of a message, a silent blackhole. Nothing
 * hangs, pending requests reject typed, no message is delivered twice, memory stays bounded.
 */
import { expect } from 'chai';
import type { Duplex } from 'node:stream';
import {
  Connection,
  ConnectionClosedError,
  HeartbeatTimeoutError,
  WebSocketCloseError,
  connectWebSocket,
  listenRemote,
  listenRemoteStreams,
  type RemoteListener,
} from '../../lib';
import { startFaultProxy, type FaultProxy } from '../fixtures/fault-proxy';
import { LineRecorder } from '../helpers/acp-lines';
import { rejectionOf } from '../helpers/async';
import { closeOf, expectTcpHandles, serveEcho, tcpHandles } from './remote-helpers';

/**
 * A heartbeat that notices a blackhole quickly, with a timeout far above what a loaded machine
 * stalls this process for (a false alarm would end the faults' connections for the wrong reason).
 */
const FAST_HEARTBEAT = { intervalMs: 100, timeoutMs: 2000 };

describe('WebSocket under network faults (fault proxy)', () => {
  let baseline: number;
  let listener: RemoteListener;
  let proxy: FaultProxy;
  let agents: { connection: Connection; closed: ReturnType<typeof closeOf> }[];
  let tap: LineRecorder;

  beforeEach(async () => {
    baseline = tcpHandles();
    agents = [];
    tap = new LineRecorder();
    listener = await listenRemote({ heartbeat: FAST_HEARTBEAT, logger: tap }, (connection) => {
      serveEcho(connection);
      agents.push({ connection, closed: closeOf(connection) });
    });
    proxy = await startFaultProxy(listener.port);
  });

  afterEach(async () => {
    await proxy.close();
    await listener.close();
    await expectTcpHandles(baseline);
  });

  const url = (): string => `ws://127.0.0.1:${proxy.port}/acp`;

  it('answers every request exactly once with added latency', async () => {
    const client = await connectWebSocket(url(), { heartbeat: FAST_HEARTBEAT });
    proxy.setLatency(20);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => client.sendRequest('echo', [i])));
    expect(answers).to.deep.equal(Array.from({ length: 200 }, (_, i) => [i]));
    await client.close();
  });

  it('delivers large messages intact through a throughput cap, without a heartbeat false alarm', async function () {
    this.timeout(60_000);
    // The fault proxy runs in this process: a stall of the process (GC, a loaded CI machine) stops
    // its forwarding too, which no heartbeat can tell from a dead peer. So the timeout here is 6 s,
    // and the payload takes 9.6 s each way at the cap: a pong queued behind it would still arrive
    // after the timeout, so only counting the payload's bytes as signs of life passes this test.
    // Meanwhile about 90 of the client's pings queue behind its payload and reach the server at
    // once while it sends the echo: a `ws` peer ends a connection that leaves more than 60 of its
    // answers unwritten, so the client keeps at most 30 pings unanswered.
    const heartbeat = { intervalMs: 100, timeoutMs: 6000 };
    await proxy.close();
    await listener.close();
    listener = await listenRemote({ heartbeat, logger: tap }, (connection) => void serveEcho(connection));
    proxy = await startFaultProxy(listener.port);
    const client = await connectWebSocket(url(), { heartbeat });
    proxy.setThroughput('toClient', 128 * 1024);
    proxy.setThroughput('toTarget', 128 * 1024);
    const payload = 'p'.repeat(1200 * 1024);
    expect(await client.sendRequest('echo', [payload])).to.deep.equal([payload]);
    expect(client.isClosed).to.equal(false);
    await client.close();
  });

  it('rejects pending requests typed when the connection is reset mid-message, and delivers nothing twice or half', async () => {
    const client = await connectWebSocket(url(), { heartbeat: FAST_HEARTBEAT });
    expect(await client.sendRequest('echo', ['before'])).to.deep.equal(['before']);
    const sleeping = client.sendRequest('sleep', { ms: 60_000 });
    await client.sendRequest('echo', ['barrier']);
    proxy.resetAfter('toTarget', 1000);
    const cut = client.sendRequest('echo', ['x'.repeat(10_000)]);
    const [sleepError, cutError] = await Promise.all([rejectionOf<Error>(sleeping), rejectionOf<Error>(cut)]);
    expect(sleepError).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'sleep', reason: 'input error' });
    expect(cutError).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'echo' });
    expect(sleepError.cause).to.be.instanceOf(WebSocketCloseError).and.include({ closeCode: 1006, isLocal: false });
    const agent = agents[0]!;
    expect((await agent.closed).reason).to.equal('input error');
    // The cut echo never reached the agent: only the two whole ones did, each once.
    const methods = tap.received.map((line) => (JSON.parse(line) as { method: string }).method);
    expect(methods).to.deep.equal(['echo', 'sleep', 'echo']);
  });

  it('detects a silent blackhole with the heartbeat on both sides: pending requests reject with ConnectionClosedError', async () => {
    const client = await connectWebSocket(url(), { heartbeat: FAST_HEARTBEAT });
    const sleeping = client.sendRequest('sleep', { ms: 60_000 });
    await client.sendRequest('echo');
    const agent = agents[0]!;
    const fromAgent = agent.connection.sendRequest('client/never');
    proxy.blackhole();
    const clientError = await rejectionOf<Error>(sleeping);
    expect(clientError).to.be.instanceOf(ConnectionClosedError).and.include({ reason: 'input error', method: 'sleep' });
    expect(clientError.cause).to.be.instanceOf(HeartbeatTimeoutError).and.include({ timeoutMs: 2000, code: 'ACP_WIRE_HEARTBEAT_TIMEOUT' });
    const agentError = await rejectionOf<Error>(fromAgent);
    expect(agentError).to.be.instanceOf(ConnectionClosedError);
    expect(agentError.cause).to.be.instanceOf(HeartbeatTimeoutError);
  });

  it('without a heartbeat, a blackhole is not detected (the heartbeat is what ends it)', async () => {
    const client = await connectWebSocket(url(), { heartbeat: false });
    await client.sendRequest('echo');
    proxy.blackhole();
    // The server's heartbeat ends its side; the client, with none, learns only from its own close.
    expect((await agents[0]!.closed).error).to.be.instanceOf(HeartbeatTimeoutError);
    expect(client.isClosed).to.equal(false);
    await client.close();
  });
});

describe('WebSocket server with a client that reads slowly', () => {
  it('stops dispatching while its socket is full and keeps what it holds bounded; every answer arrives once', async function () {
    this.timeout(60_000);
    const baseline = tcpHandles();
    let stream!: Duplex & { bufferedAmount?: number };
    let dispatched = 0;
    let dispatchedWhileFull = 0;
    let maxBuffered = 0;
    let drains = 0;
    const answerBytes = 16 * 1024;
    const listener = await listenRemoteStreams({ heartbeat: false }, (server) => {
      stream = server;
      // The connection owns the stream and sends through its message port: backpressure shows
      // on the connection (writableNeedDrain, 'drain'), not on the stream's writable side.
      const connection = new Connection(server, server);
      connection.on('drain', () => drains++);
      connection.once('close', () => server.destroy());
      connection.onRequest('big', () => {
        dispatched++;
        if (connection.writableNeedDrain) dispatchedWhileFull++;
        maxBuffered = Math.max(maxBuffered, stream.bufferedAmount ?? 0);
        return 'b'.repeat(answerBytes);
      });
    });
    const proxy = await startFaultProxy(listener.port);
    try {
      proxy.setThroughput('toClient', 2 * 1024 * 1024);
      const client = await connectWebSocket(`ws://127.0.0.1:${proxy.port}/acp`, { heartbeat: false });
      const count = 600;
      const answers = await Promise.all(Array.from({ length: count }, () => client.sendRequest<string>('big')));
      expect(answers.every((answer) => answer.length === answerBytes)).to.equal(true);
      expect(dispatched).to.equal(count);
      expect(drains, 'the socket was full at least once').to.be.above(0);
      expect(dispatchedWhileFull).to.equal(0);
      // The socket never held much more than its high-water mark (1 MiB) and one tick's answers.
      expect(maxBuffered).to.be.below(4 * 1024 * 1024);
      await client.close();
    } finally {
      await proxy.close();
      await listener.close();
    }
    await expectTcpHandles(baseline);
  });
});
