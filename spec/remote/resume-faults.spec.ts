/**
 * Resumable remote connections at their limits: a blackhole longer than the grace period, a reset
 * while the client is sending, a replay buffer too small for what was missed, a client that closed,
 * a server that does not offer resumption.
 */
import { expect } from 'chai';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import {
  ConnectionClosedError,
  ResumeFailedError,
  WebSocketCloseError,
  connectWebSocket,
  listenRemote,
  type Connection,
  type RemoteListener,
} from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import type { Direction } from '../fixtures/fault-proxy';
import { startFaultProxy } from '../fixtures/fault-proxy';
import { rejectionOf } from '../helpers/async';
import { FAST_HEARTBEAT, connectResuming, recordTurns, useResumeBenches, type ResumeBench, type ResumeTransport } from './resume-helpers';

/** Resolves with the first `session/update` of `client` that `accept` takes. */
function firstUpdate(client: Connection, accept: (update: { sessionUpdate: string }) => boolean): Promise<void> {
  return new Promise((resolve) => {
    client.onNotification('session/update', (params) => {
      if (accept((params as { update: { sessionUpdate: string } }).update)) resolve();
    });
  });
}

async function openSession(client: Connection, version: number): Promise<string> {
  await client.sendRequest('initialize', { protocolVersion: version });
  return ((await client.sendRequest('session/new', { cwd: '/', mcpServers: [] })) as { sessionId: string }).sessionId;
}

describe('Resumable remote connections at their limits', () => {
  let bench: ResumeBench | undefined;
  const startBench = useResumeBenches();

  /**
   * A blackhole longer than the grace period, per transport: what ends the agent's connection
   * (WebSocket: the server's heartbeat pings go unanswered, the socket closes, the grace ends the
   * stream; Streamable HTTP: the client's heartbeats stop, the server drops its event stream, the
   * grace ends the connection as an abandoned one) and what the refused resume says.
   */
  const blackholes = [
    { transport: 'websocket', reconnect: {}, agentReason: 'input ended', detail: 'unknown connection' },
    {
      transport: 'http',
      reconnect: { silenceMs: 300, heartbeatMs: 100 },
      agentReason: 'closed locally',
      detail: 'Unknown Acp-Connection-Id',
    },
  ] as const;
  for (const { transport, reconnect, agentReason, detail } of blackholes) {
    it(`${transport}: a blackhole longer than the grace period ends the agent and fails the client with a ResumeFailedError`, async function () {
      this.timeout(20_000);
      bench = await startBench({ graceMs: 500 });
      const reconnecting: Error[] = [];
      const client = await connectResuming(bench.url(transport), transport, {
        ...reconnect,
        attempts: 100,
        minDelayMs: 20,
        maxDelayMs: 50,
        onReconnecting: (event) => void reconnecting.push(event.error),
      });
      await openSession(client, 2);
      const sleeping = client.sendRequest('_test/sleep', { ms: 60_000 });
      // The sleep has reached the agent once a later request is answered.
      await client.sendRequest('_test/echo', {});
      // Nothing is forwarded or closed any more: the server's sockets stay open.
      bench.proxy.blackhole();
      const agentClosed = await bench.agents[0]!.closed;
      expect(agentClosed.reason).to.equal(agentReason);
      bench.proxy.heal();
      const error = await rejectionOf<ConnectionClosedError>(sleeping);
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(error.cause).to.be.instanceOf(ResumeFailedError).and.include({ code: 'ACP_WIRE_RESUME_FAILED', reason: 'refused' });
      expect((error.cause as ResumeFailedError).detail).to.include(detail);
      expect(reconnecting.length).to.be.greaterThan(0);
      expect(client.isClosed).to.equal(true);
      while (bench.listener.clientCount > 0) await new Promise((resolve) => bench!.listener.pool.once('closed', resolve));
    });
  }

  it('Streamable HTTP: a silent network (blackhole) is noticed within silenceMs and the turn resumes once it is back', async function () {
    this.timeout(20_000);
    bench = await startBench({ graceMs: 10_000 });
    let wake!: () => void;
    let attempts = 0;
    const twoAttempts = new Promise<void>((resolve) => (wake = resolve));
    const client = await connectResuming(bench.url('http'), 'http', {
      attempts: 100,
      minDelayMs: 20,
      maxDelayMs: 50,
      silenceMs: 300,
      onReconnecting: () => void (++attempts >= 2 && wake()),
    });
    const sessionId = await openSession(client, 2);
    const log = recordTurns(client, sessionId);
    log.startTurn();
    const idle = log.whenStops(1);
    const text = Array.from({ length: 30 }, (_, k) => `w${k}`).join(' ');
    await client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text }], _meta: { workMs: 1500 } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    bench.proxy.blackhole();
    await twoAttempts;
    bench.proxy.heal();
    await idle;
    expect(log.chunks).to.deep.equal([`echo: ${text}`.match(/\S+\s*/g)]);
    expect(log.stops).to.deep.equal(['end_turn']);
    expect(bench.agents.length).to.equal(1);
    await client.close();
  });

  for (const transport of ['websocket', 'http'] as const) {
    for (const direction of ['toTarget', 'toClient'] as const) {
      it(`${transport}: a reset (${direction}) while the client sends a burst applies every message once, in order`, async function () {
        this.timeout(20_000);
        bench = await startBench({ graceMs: 5000 });
        let resumes = 0;
        const client = await connectResuming(bench.url(transport), transport, {
          minDelayMs: 5,
          maxDelayMs: 20,
          onResumed: () => void resumes++,
        });
        await openSession(client, 2);
        const padding = 'p'.repeat(500);
        const reset = bench.proxy.nextReset();
        // Client→server, mid-burst; server→client, the acknowledgements (WebSocket) or 202s (HTTP).
        bench.proxy.resetAfter(direction as Direction, direction === 'toTarget' ? 20_000 : 200);
        for (let i = 0; i < 300; i++) client.sendNotification('_test/note', { i, padding });
        await reset;
        const { notifications } = (await client.sendRequest('_test/received', {})) as {
          notifications: { method: string; params: { i: number } }[];
        };
        const notes = notifications.filter((n) => n.method === '_test/note').map((n) => n.params.i);
        expect(notes).to.deep.equal(Array.from({ length: 300 }, (_, i) => i));
        expect(resumes).to.be.greaterThan(0);
        expect(bench.agents.length).to.equal(1);
        await client.close();
      });
    }
  }

  for (const transport of ['websocket', 'http'] as const satisfies readonly ResumeTransport[]) {
    it(`${transport}: a resume after more was missed than the buffer holds is refused (${transport === 'http' ? '409' : 'stream/resume_failed'}), typed, never a gap`, async function () {
      this.timeout(20_000);
      bench = await startBench({ graceMs: 1000, bufferMessages: 5 });
      const client = await connectResuming(bench.url(transport), transport, { minDelayMs: 400, maxDelayMs: 400 });
      const sessionId = await openSession(client, 2);
      const sleeping = client.sendRequest('_test/sleep', { ms: 60_000 });
      const started = firstUpdate(client, (update) => update.sessionUpdate === 'agent_message_chunk');
      const text = Array.from({ length: 30 }, (_, k) => `w${k}`).join(' ');
      await client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text }], _meta: { workMs: 100 } });
      await started;
      bench.proxy.resetAfter('toClient', 1);
      const error = await rejectionOf<ConnectionClosedError>(sleeping);
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(error.cause).to.be.instanceOf(ResumeFailedError).and.include({ reason: 'refused' });
      expect((error.cause as ResumeFailedError).detail).to.match(/no longer held/);
      // The agent is ended at the end of the grace period (no client resumed it).
      expect((await bench.agents[0]!.closed).reason).to.be.oneOf(['input ended', 'closed locally']);
    });
  }

  it('WebSocket: a client closed while it reconnects through a blackhole stops at once and leaves nothing open', async function () {
    this.timeout(20_000);
    bench = await startBench({ graceMs: 500 });
    let onAttempt!: () => void;
    const attempting = new Promise<void>((resolve) => (onAttempt = resolve));
    const client = await connectResuming(bench.url('websocket'), 'websocket', {
      minDelayMs: 2,
      maxDelayMs: 4,
      onReconnecting: () => onAttempt(),
    });
    await openSession(client, 2);
    const sleeping = client.sendRequest('_test/sleep', { ms: 60_000 });
    bench.proxy.blackhole();
    await attempting;
    // The attempt's handshake is under way (it would wait 1 s for the blackhole): closing aborts it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await client.close();
    expect(await rejectionOf(sleeping)).to.be.instanceOf(ConnectionClosedError);
    expect((await bench.agents[0]!.closed).reason).to.equal('input ended');
  });

  for (const transport of ['websocket', 'http'] as const) {
    it(`${transport}: a client that closed does not reconnect, and its agent ends at once`, async () => {
      bench = await startBench({ graceMs: 60_000 });
      let attempts = 0;
      const client = await connectResuming(bench.url(transport), transport, { onReconnecting: () => void attempts++ });
      await openSession(client, 2);
      await client.close();
      expect((await bench.agents[0]!.closed).reason).to.equal('input ended');
      expect(attempts).to.equal(0);
    });
  }
});

describe('Resumable Streamable HTTP, raw', () => {
  let listener: RemoteListener;
  afterEach(async () => {
    await listener.close();
  });

  /** A GET of the connection's event stream; resolves with the response once its head arrived. */
  function getEvents(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(url, { method: 'GET', headers: { Accept: 'text/event-stream', ...headers } }, resolve);
      request.once('error', reject);
      request.end();
    });
  }

  it('a GET with Last-Event-ID takes over from an event stream the server still holds (half-open); one without is 409', async () => {
    listener = await listenRemote({ resume: true }, (connection) => serveConformanceAgent(connection));
    const init = await fetch(listener.httpUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } }),
    });
    const connectionId = init.headers.get('acp-connection-id')!;
    const answer = (await init.json()) as { result: { capabilities: { transport: { resumable: unknown } } } };
    expect(answer.result.capabilities.transport.resumable).to.deep.equal({ retentionMessages: 1000, retentionSeconds: 300 });
    const first = await getEvents(listener.httpUrl, { 'Acp-Connection-Id': connectionId });
    expect(first.statusCode).to.equal(200);
    const firstClosed = new Promise((resolve) => first.once('close', resolve));
    first.resume();
    const busy = await getEvents(listener.httpUrl, { 'Acp-Connection-Id': connectionId });
    expect(busy.statusCode).to.equal(409);
    busy.resume();
    const second = await getEvents(listener.httpUrl, { 'Acp-Connection-Id': connectionId, 'Last-Event-ID': '0' });
    expect(second.statusCode).to.equal(200);
    await firstClosed;
    const gone = await getEvents(listener.httpUrl, { 'Acp-Connection-Id': 'no-such-connection', 'Last-Event-ID': '3' });
    expect(gone.statusCode).to.equal(409);
    gone.resume();
    second.destroy();
  });
});

describe('A reconnecting client and a server without resumption', () => {
  let listener: RemoteListener;
  afterEach(async () => {
    await listener.close();
  });

  it('fails on a drop as without reconnection (the server advertised nothing)', async () => {
    listener = await listenRemote({ heartbeat: FAST_HEARTBEAT }, (connection) => serveConformanceAgent(connection));
    const proxy = await startFaultProxy(listener.port);
    let attempts = 0;
    const client = await connectWebSocket(`ws://127.0.0.1:${proxy.port}/acp`, { reconnect: { onReconnecting: () => void attempts++ } });
    const result = (await client.sendRequest('initialize', { protocolVersion: 2 })) as { capabilities: Record<string, unknown> };
    expect(result.capabilities).to.not.have.property('transport');
    const sleeping = client.sendRequest('_test/sleep', { ms: 60_000 });
    proxy.resetAfter('toTarget', 1);
    void client.sendRequest('_test/echo', {}).catch(() => {});
    const error = await rejectionOf<ConnectionClosedError>(sleeping);
    expect(error.cause).to.be.instanceOf(WebSocketCloseError).and.include({ closeCode: 1006 });
    expect(attempts).to.equal(0);
    await proxy.close();
  });
});
