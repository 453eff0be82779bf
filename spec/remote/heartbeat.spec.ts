/**
 * The WebSocket heartbeat: pings on its interval, keeps a peer that answers, and ends the
 * connection to one that stays silent with a HeartbeatTimeoutError.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { HeartbeatTimeoutError, listenRemote, type Connection, type RemoteListener } from '../../lib';
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
});
