import { expect } from 'chai';
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { ConnectionClosedError, listenTcp, socketConnection, type Connection, type TcpListener } from '../../lib';
import { track } from '../helpers/async';
import { activeResources, listenerCounts, nextEvent, STREAM_EVENTS, UnhandledRejections } from '../helpers/events';

/** A client and a server connection over a real socket on 127.0.0.1; the server holds every `wait` request. */
interface TcpRig {
  listener: TcpListener;
  client: Connection;
  server: Connection;
  serverSocket: Socket;
  clientSocket: Socket;
  /** The signals of the `wait` requests the server is holding. */
  held: AbortSignal[];
  /** Resolves once the server holds `count` requests. */
  whenHeld(count: number): Promise<void>;
}

async function tcpRig(): Promise<TcpRig> {
  const held: AbortSignal[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let accepted!: (value: { server: Connection; serverSocket: Socket }) => void;
  const serverSide = new Promise<{ server: Connection; serverSocket: Socket }>((resolve) => (accepted = resolve));
  const listener = await listenTcp({ port: 0 }, (server, serverSocket) => {
    server.onRequest('wait', (_params, responder) => {
      held.push(responder.signal);
      responder.signal.addEventListener('abort', () => responder);
      for (const waiter of waiters.filter((w) => w.count === held.length)) waiter.resolve();
    });
    accepted({ server, serverSocket });
  });
  const clientSocket = createConnection({ host: '127.0.0.1', port: listener.port });
  await once(clientSocket, 'connect');
  const client = socketConnection(clientSocket);
  const whenHeld = (count: number): Promise<void> =>
    held.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }));
  return { listener, client, clientSocket, held, whenHeld, ...(await serverSide) };
}

/** Sends `count` held requests from the client and resolves once the server is holding all of them. */
async function holdRequests(rig: TcpRig, count: number): Promise<ReturnType<typeof track>[]> {
  const sent = Array.from({ length: count }, () => track(rig.client.sendRequest('wait')));
  await rig.whenHeld(count);
  return sent;
}

describe('Connection over a TCP socket that is reset or destroyed', () => {
  const rejections = new UnhandledRejections();
  before(() => rejections.install());
  after(() => rejections.uninstall());

  it('rejects pending requests with ConnectionClosedError "input error" caused by ECONNRESET when the peer resets', async () => {
    const rig = await tcpRig();
    const sent = await holdRequests(rig, 3);
    rig.serverSocket.resetAndDestroy();
    await Promise.all(sent.map((s) => s.done));
    for (const { outcome } of sent) {
      expect(outcome.status).to.equal('rejected');
      const reason = (outcome as { reason: ConnectionClosedError }).reason;
      expect(reason).to.be.instanceOf(ConnectionClosedError).and.include({ reason: 'input error', method: 'wait' });
      expect(reason.cause).to.have.property('code', 'ECONNRESET');
    }
    await rig.listener.close();
  });

  it('aborts the handlers on the side that resets with ConnectionClosedError and forgets them', async () => {
    const rig = await tcpRig();
    await holdRequests(rig, 2);
    rig.serverSocket.resetAndDestroy();
    await nextEvent(rig.server, 'close');
    expect(rig.held.map((signal) => signal.reason)).to.satisfy((reasons: unknown[]) =>
      reasons.every((reason) => reason instanceof ConnectionClosedError),
    );
    expect(rig.server.inflightCount).to.equal(0);
    await rig.listener.close();
  });

  it('rejects pending requests with ConnectionClosedError "input ended" when the peer destroys its socket', async () => {
    const rig = await tcpRig();
    const sent = await holdRequests(rig, 2);
    rig.serverSocket.destroy();
    await Promise.all(sent.map((s) => s.done));
    expect(sent.map((s) => (s.outcome as { reason: ConnectionClosedError }).reason.reason)).to.deep.equal(['input ended', 'input ended']);
    await rig.listener.close();
  });

  it("rejects the server's own requests when the client resets", async () => {
    const rig = await tcpRig();
    let bothAsked!: () => void;
    const asking = new Promise<void>((resolve) => (bothAsked = resolve));
    let got = 0;
    rig.client.onRequest('ask', (_params, responder) => {
      responder.signal.addEventListener('abort', () => responder);
      if (++got === 2) bothAsked();
    });
    const asked = [track(rig.server.sendRequest('ask')), track(rig.server.sendRequest('ask'))];
    await asking;
    rig.clientSocket.resetAndDestroy();
    await Promise.all(asked.map((s) => s.done));
    for (const { outcome } of asked) {
      expect((outcome as { reason: unknown }).reason)
        .to.be.instanceOf(ConnectionClosedError)
        .and.include({ method: 'ask' });
    }
    await rig.listener.close();
  });

  it("removes the connection's data, end and close listeners from a reset socket", async () => {
    const rig = await tcpRig();
    const beforeCounts = listenerCounts(rig.clientSocket, STREAM_EVENTS);
    rig.serverSocket.resetAndDestroy();
    await nextEvent(rig.client, 'close');
    await rig.listener.close();
    const afterCounts = listenerCounts(rig.clientSocket, STREAM_EVENTS);
    // Its error listeners are swapped for guards that swallow a late error on the dead socket.
    expect(afterCounts).to.deep.equal({
      ...beforeCounts,
      data: beforeCounts.data! - 1,
      end: beforeCounts.end! - 1,
      close: beforeCounts.close! - 1,
    });
  });

  it('leaves no socket, server or timer behind once the listener is closed', async () => {
    // Mocha arms its timeout timer once the test function has returned its promise.
    await nextMacrotask();
    const before = activeResources();
    const rig = await tcpRig();
    await holdRequests(rig, 2);
    rig.serverSocket.resetAndDestroy();
    await nextEvent(rig.client, 'close');
    await rig.listener.close();
    // Handles finish closing in the next loop iterations.
    await nextMacrotask();
    await nextMacrotask();
    expect(activeResources()).to.deep.equal(before);
  });

  it('leaves no rejection unhandled', () => {
    expect(rejections.reasons).to.deep.equal([]);
  });
});
