/**
 * A resumable server that drains: its busy clients finish their turns, then every client is closed
 * with a typed "go elsewhere" (`ServerGoingAwayError`) and never resumes to it; an AcpClient with
 * `reattach` re-attaches its sessions on another host when that host's agent can.
 */
import { expect } from 'chai';
import {
  AcpAgent,
  AcpClient,
  ConnectionClosedError,
  ErrorCode,
  RpcError,
  ServerGoingAwayError,
  SessionLostError,
  listenRemote,
  type Connection,
  type ReattachedEvent,
  type RemoteListener,
} from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { rejectionOf } from '../helpers/async';
import { closeOf, expectTcpHandles, tcpHandles } from './remote-helpers';
import { connectResuming, type ResumeTransport } from './resume-helpers';

const listeners: RemoteListener[] = [];

/** A resumable server on 127.0.0.1: the conformance agent, or `serve`. */
async function startServer(
  serve: (connection: Connection) => void = (connection) => serveConformanceAgent(connection),
): Promise<RemoteListener> {
  const listener = await listenRemote({ resume: { graceMs: 60_000 } }, serve);
  listeners.push(listener);
  return listener;
}

function urlOf(listener: RemoteListener, transport: ResumeTransport): string {
  return transport === 'websocket' ? listener.url : listener.httpUrl;
}

/** An ACP v2 agent that answers turns with `done` and refuses or ignores re-attachment. */
/**
 * An agent on the other host: one that offers no way to re-attach (ACP v1 listing no `loadSession`
 * nor `sessionCapabilities.resume`: an `AcpAgent` in v2 always serves `session/resume`), or one
 * that refuses every session.
 */
function plainAgent(connection: Connection, attach: 'unsupported' | 'unknown session'): void {
  new AcpAgent(connection, {
    info: { name: 'plain', version: '1' },
    ...(attach === 'unsupported' ? { protocolVersions: [1] as const, initialize: () => ({ capabilities: {} }) } : {}),
    prompt: (turn) => void turn.sendText('done'),
    attachSession: ({ sessionId }) => {
      throw new RpcError(ErrorCode.ResourceNotFound, 'Resource not found', { sessionId });
    },
  });
}

describe('A resumable server that drains', () => {
  let baseline: number;
  beforeEach(() => {
    baseline = tcpHandles();
  });
  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((listener) => listener.close()));
    await expectTcpHandles(baseline);
  });

  for (const transport of ['websocket', 'http'] as const) {
    it(`${transport}: closes an idle client at once and a busy one after its turn, each with ServerGoingAwayError, and neither resumes`, async function () {
      this.timeout(20_000);
      const server = await startServer();
      let attempts = 0;
      const reconnect = { onReconnecting: () => void attempts++ };
      const events: string[] = [];
      const idle = await connectResuming(urlOf(server, transport), transport, reconnect);
      const busy = await connectResuming(urlOf(server, transport), transport, reconnect);
      for (const client of [idle, busy]) await client.sendRequest('initialize', { protocolVersion: 1 });
      const { sessionId } = (await busy.sendRequest('session/new', { cwd: '/', mcpServers: [] })) as { sessionId: string };
      const idleClosed = closeOf(idle).then((close) => (events.push('idle closed'), close));
      const busyClosed = closeOf(busy).then((close) => (events.push('busy closed'), close));
      const turn = busy.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a b c' }], _meta: { workMs: 300 } });
      const answered = turn.then((answer) => (events.push('busy answered'), answer));
      await busy.sendRequest('_test/echo', {}).then(undefined, () => {}); // the prompt has reached the agent

      const drained = server.drain({ timeoutMs: 10_000 });
      expect(await answered).to.include({ stopReason: 'end_turn' });
      for (const closed of [await idleClosed, await busyClosed]) {
        expect(closed.reason).to.equal('input error');
        expect(closed.error).to.be.instanceOf(ServerGoingAwayError).and.include({ code: 'ACP_WIRE_SERVER_GOING_AWAY' });
      }
      expect((await busyClosed).error).to.include({ closeCode: transport === 'websocket' ? 1001 : undefined });
      expect(events).to.deep.equal(['idle closed', 'busy answered', 'busy closed']);
      expect(await drained).to.deep.equal({ clients: 2, cut: 0 });
      expect(attempts, 'resume attempts').to.equal(0);
    });
  }

  for (const transport of ['websocket', 'http'] as const) {
    it(`${transport}: an AcpClient with reattach re-attaches its session on another host (shared session storage) and goes on`, async function () {
      this.timeout(20_000);
      const draining = await startServer();
      const elsewhere = await startServer();
      let onReattached!: (event: ReattachedEvent) => void;
      const reattached = new Promise<ReattachedEvent>((resolve) => (onReattached = resolve));
      let attempts = 0;
      const reconnect = { onReconnecting: () => void attempts++ };
      const initialized: number[] = [];
      const client = new AcpClient(await connectResuming(urlOf(draining, transport), transport, reconnect), {
        // The balancer: a new connection lands on the host that is not draining.
        reattach: {
          connect: () => connectResuming(urlOf(elsewhere, transport), transport, reconnect),
          afterInitialize: (agent) => void initialized.push(agent.protocolVersion),
          onReattached,
        },
      });
      await client.initialize();
      const { sessionId } = await client.newSession({ cwd: '/' });
      await draining.drain({ timeoutMs: 10_000 });
      const event = await reattached;
      expect(event.cause).to.be.instanceOf(ServerGoingAwayError);
      expect(event.sessions).to.deep.equal([sessionId]);
      expect(initialized, 'afterInitialize calls').to.deep.equal([2]);
      const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: 'still here' }] });
      expect((await turn).stopReason).to.equal('end_turn');
      expect(attempts, 'resume attempts').to.equal(0);
      await client.close();
    });
  }

  for (const attach of ['unsupported', 'unknown session'] as const) {
    it(`loses the session with SessionLostError when the other host's agent ${attach === 'unsupported' ? 'offers no session/resume' : 'does not know it'}`, async function () {
      this.timeout(20_000);
      const draining = await startServer();
      const elsewhere = await startServer((connection) => plainAgent(connection, attach));
      let onReattached!: (event: ReattachedEvent) => void;
      const reattached = new Promise<ReattachedEvent>((resolve) => (onReattached = resolve));
      const client = new AcpClient(await connectResuming(draining.url, 'websocket', {}), {
        reattach: { connect: () => connectResuming(elsewhere.url, 'websocket', {}), onReattached },
      });
      await client.initialize();
      const { sessionId } = await client.newSession({ cwd: '/' });
      await draining.drain({ timeoutMs: 10_000 });
      const event = await reattached;
      expect(event.sessions).to.deep.equal([]);
      expect(event.lost).to.have.length(1);
      const lost = event.lost[0]!;
      expect(lost).to.be.instanceOf(SessionLostError).and.include({ sessionId, code: 'ACP_WIRE_SESSION_LOST' });
      if (attach === 'unsupported') expect(lost.reason).to.equal('unsupported');
      else {
        expect(lost.reason).to.equal('refused');
        expect(lost.cause).to.be.instanceOf(RpcError).and.include({ code: ErrorCode.ResourceNotFound });
      }
      // The new connection stays usable for new sessions.
      expect(event.connection).to.equal(client.connection);
      const { sessionId: fresh } = await client.newSession({ cwd: '/' });
      expect((await client.prompt({ sessionId: fresh, prompt: [{ type: 'text', text: 'hi' }] })).stopReason).to.equal('end_turn');
      await client.close();
    });
  }

  it('an AcpClient cut at the drain deadline rejects its pending requests once, re-attaches only the sessions not closed', async function () {
    this.timeout(20_000);
    const draining = await startServer();
    const elsewhere = await startServer();
    let onReattached!: (event: ReattachedEvent) => void;
    const reattached = new Promise<ReattachedEvent>((resolve) => (onReattached = resolve));
    const first = await connectResuming(draining.url, 'websocket', {});
    const client = new AcpClient(first, { reattach: { connect: () => connectResuming(elsewhere.url, 'websocket', {}), onReattached } });
    await client.initialize();
    const { sessionId: kept } = await client.newSession({ cwd: '/' });
    const { sessionId: closed } = await client.newSession({ cwd: '/' });
    // The conformance agent does not serve session/close: its -32601 answer does not matter here.
    await client.closeSession(closed).then(undefined, () => {});
    const sleeping = first.sendRequest('_test/sleep', { ms: 60_000 });
    let rejections = 0;
    sleeping.then(undefined, () => void rejections++);
    await first.sendRequest('_test/echo', {}); // the sleep has reached the agent
    const result = await draining.drain({ timeoutMs: 0 });
    expect(result).to.deep.equal({ clients: 1, cut: 1 });
    const error = await rejectionOf<ConnectionClosedError>(sleeping);
    expect(error).to.be.instanceOf(ConnectionClosedError);
    expect(error.cause).to.be.instanceOf(ServerGoingAwayError);
    const event = await reattached;
    expect(event.sessions).to.deep.equal([kept]);
    expect(event.lost).to.deep.equal([]);
    expect(rejections).to.equal(1);
    await client.close();
  });

  it('an AcpClient closed during its fallback closes the new connection and opens no session', async function () {
    this.timeout(20_000);
    const draining = await startServer();
    const elsewhere = await startServer();
    let onReattached!: (event: ReattachedEvent) => void;
    const reattached = new Promise<ReattachedEvent>((resolve) => (onReattached = resolve));
    let connecting!: () => void;
    const isConnecting = new Promise<void>((resolve) => (connecting = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let opened: Connection | undefined;
    const connect = async (signal: AbortSignal): Promise<Connection> => {
      connecting();
      await released;
      expect(signal.aborted, 'the signal given to connect').to.equal(true);
      opened = await connectResuming(elsewhere.url, 'websocket', {});
      return opened;
    };
    const client = new AcpClient(await connectResuming(draining.url, 'websocket', {}), { reattach: { connect, onReattached } });
    await client.initialize();
    const { sessionId } = await client.newSession({ cwd: '/' });
    void draining.drain({ timeoutMs: 10_000 });
    await isConnecting;
    await client.close();
    release();
    const event = await reattached;
    expect(event.connection).to.equal(undefined);
    expect(event.lost.map((lost) => [lost.sessionId, lost.reason])).to.deep.equal([[sessionId, 'no connection']]);
    expect(opened?.isClosed, 'the connection opened meanwhile').to.equal(true);
  });
});
