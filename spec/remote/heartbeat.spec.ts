/**
 * The WebSocket heartbeat: pings on its interval, keeps a peer that answers, and ends the
 * connection to one that stays silent with a HeartbeatTimeoutError.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { HeartbeatTimeoutError, connectWebSocket, listenRemote, type Connection, type RemoteListener } from '../../lib';
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
});
