/**
 * The WebSocket heartbeat: pings on its interval, keeps a peer that answers, and ends the
 * connection to one that stays silent with a HeartbeatTimeoutError.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { HeartbeatTimeoutError, connectWebSocket, listenRemote, type Connection, type RemoteListener } from '../../lib';
import { Heartbeat } from '../../lib/transports/remote/websocket/heartbeat';
import { rejectionOf } from '../helpers/async';
import { closeOf, connectRawWebSocket, expectTcpHandles, serveEcho, tcpHandles } from './remote-helpers';

describe('WebSocket heartbeat', () => {
  let baseline: number;
  let listener: RemoteListener;
  let agents: { connection: Connection; closed: ReturnType<typeof closeOf> }[];

  beforeEach(async () => {
    baseline = tcpHandles();
    agents = [];
    listener = await listenRemote({ heartbeat: { intervalMs: 50, timeoutMs: 150 } }, (connection) => {
      serveEcho(connection);
      agents.push({ connection, closed: closeOf(connection) });
    });
  });

  afterEach(async () => {
    await listener.close();
    await expectTcpHandles(baseline);
  });

  it('pings on its interval and keeps a peer that answers with pongs', async () => {
    const socket = await connectRawWebSocket(listener.url);
    for (let ping = 0; ping < 5; ping++) await once(socket.ws, 'ping');
    socket.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['alive'] });
    expect(await socket.lines.next()).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["alive"]}']);
    expect(agents[0]!.connection.isClosed).to.equal(false);
    await socket.close();
  });

  it('ends the connection to a peer that answers no ping, with HeartbeatTimeoutError', async () => {
    const socket = await connectRawWebSocket(listener.url, { autoPong: false });
    const pending = agents[0]!.connection.sendRequest('client/anything');
    const [{ reason, error }, closed] = await Promise.all([agents[0]!.closed, socket.closed]);
    expect(reason).to.equal('input error');
    expect(error).to.be.instanceOf(HeartbeatTimeoutError).and.include({ timeoutMs: 150 });
    expect(closed.code).to.equal(1006);
    expect((await rejectionOf<Error>(pending)).cause).to.equal(error);
  });

  it('ends the connection to a peer that reads everything but answers no ping, also while this side keeps sending', async () => {
    // Our writes reach the kernel (the peer reads them): that proves nothing about the peer.
    const socket = await connectRawWebSocket(listener.url, { autoPong: false });
    const agent = agents[0]!;
    const sending = setInterval(() => agent.connection.sendNotification('client/note', { text: 'x'.repeat(100) }), 2);
    agent.connection.once('close', () => clearInterval(sending));
    const { reason, error } = await agent.closed;
    expect(reason).to.equal('input error');
    expect(error).to.be.instanceOf(HeartbeatTimeoutError);
    await socket.closed;
  });

  it('with a timeout longer than its interval, pings every interval while a verdict is pending, and those pings are no sign of the peer', async () => {
    // A peer whose own pings wait behind a large message hears from us every interval (before, one
    // ping per timeout, which a peer with the same timeout could miss); a silent peer still ends.
    const slow = await listenRemote({ heartbeat: { intervalMs: 50, timeoutMs: 600 } }, (connection) => {
      serveEcho(connection);
      agents.push({ connection, closed: closeOf(connection) });
    });
    try {
      const socket = await connectRawWebSocket(slow.url, { autoPong: false });
      for (let ping = 0; ping < 4; ping++) await once(socket.ws, 'ping');
      expect(agents[0]!.connection.isClosed, 'closed before the timeout').to.equal(false);
      const [{ reason, error }] = await Promise.all([agents[0]!.closed, socket.closed]);
      expect(reason).to.equal('input error');
      expect(error).to.be.instanceOf(HeartbeatTimeoutError).and.include({ timeoutMs: 600 });
    } finally {
      await slow.close();
    }
  });

  it('keeps a live peer whose pong waits unread in the socket when this process was stalled past the timeout', async () => {
    // The peer answers the first ping, then this whole process stalls (a long synchronous task, a
    // GC pause, a descheduled process) past the ping's timeout: when it resumes, the timeout is due
    // before the pong waiting in the socket has been read.
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false });
    await once(server, 'listening');
    const pinged = new Promise<void>((resolvePinged) => {
      server.on('connection', (ws) => {
        let pings = 0;
        ws.on('ping', () => {
          ws.pong();
          if (++pings === 2) return resolvePinged();
          if (pings > 1) return;
          const until = Date.now() + 200;
          while (Date.now() < until) {
            // stalled
          }
        });
      });
    });
    try {
      const port = (server.address() as AddressInfo).port;
      const client = await connectWebSocket(`ws://127.0.0.1:${port}/`, { heartbeat: { intervalMs: 20, timeoutMs: 50 } });
      const closed = new Promise<string>((resolve) =>
        client.once('close', (reason, error) => resolve(`closed (${reason}): ${String(error)}`)),
      );
      expect(await Promise.race([closed, pinged.then(() => 'pinged again')])).to.equal('pinged again');
      await client.close();
    } finally {
      for (const ws of server.clients) ws.terminate();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives no verdict while this side does not read its socket, and judges a silent peer once it reads again', async () => {
    await withSilentPeer(async (ws, socket, peer) => {
      let heartbeat: Heartbeat | undefined;
      const judged = new Promise<void>((resolve) => {
        heartbeat = new Heartbeat(ws, socket, { intervalMs: 20, timeoutMs: 50 }, () => resolve());
      });
      try {
        // This side's reader is full: its socket is paused, and what the peer sends waits unread.
        ws.pause();
        const pinged = (async () => {
          for (let ping = 0; ping < 10; ping++) await once(peer, 'ping');
          return 'pinged ten times';
        })();
        expect(await Promise.race([pinged, judged.then(() => 'judged while not reading')])).to.equal('pinged ten times');
        ws.resume();
        await judged;
      } finally {
        heartbeat?.stop();
      }
    });
  });

  it('leaves at most 30 pings unanswered, so that a peer on ws never ends the connection for too many pending pongs, and pings again once a pong comes', async () => {
    await withSilentPeer(async (ws, socket, peer) => {
      let pings = 0;
      peer.on('ping', () => pings++);
      const heartbeat = new Heartbeat(ws, socket, { intervalMs: 5, timeoutMs: 60_000 }, () => {
        throw new Error('no verdict is due within this test');
      });
      try {
        while (pings < 30) await once(peer, 'ping');
        // Sixty more intervals: an uncapped heartbeat would have pinged about sixty more times.
        await delay(300);
        expect(pings).to.equal(30);
        peer.pong();
        await once(peer, 'ping');
        expect(pings).to.equal(31);
      } finally {
        heartbeat.stop();
      }
    });
  });
});

/**
 * Runs `test` with the server side of a WebSocket (`ws` and its socket) and a peer that answers no
 * ping by itself (it pongs only when told); both are ended, and the server closed, afterwards.
 */
async function withSilentPeer(test: (ws: WebSocket, socket: Socket, peer: WebSocket) => Promise<void>): Promise<void> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[WebSocket, IncomingMessage]>;
  const peer = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, { autoPong: false });
  peer.on('error', () => {});
  try {
    const [ws, request] = await accepted;
    await test(ws, request.socket as Socket, peer);
  } finally {
    peer.terminate();
    for (const ws of server.clients) ws.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
}
