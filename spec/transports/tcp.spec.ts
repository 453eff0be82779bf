import { expect } from 'chai';
import { Socket, createServer, type AddressInfo, type Server } from 'node:net';
import { once } from 'node:events';
import {
  ConnectionClosedError,
  connectTcp,
  listenTcp,
  type CloseReason,
  type Connection,
  type Responder,
  type TcpListener,
} from '../../lib';
import { nextEvent } from '../helpers/events';

/** A port nothing listens on: bound, then released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('TCP transport', () => {
  let listener: TcpListener | undefined;
  const accepted: { connection: Connection; socket: Socket }[] = [];
  const held: Responder[] = [];
  let onHold: () => void = () => {};
  beforeEach(async () => {
    accepted.length = 0;
    held.length = 0;
    listener = await listenTcp({ port: 0 }, (connection, socket) => {
      connection.onRequest('echo', (params: unknown) => params);
      connection.onRequest('hold', (_params, responder) => {
        held.push(responder);
        onHold();
      });
      accepted.push({ connection, socket });
    });
  });
  afterEach(() => listener?.close());

  describe('listenTcp()', () => {
    it('is closed by `await using`: leaving the block stops listening and closes its connections', async () => {
      let server: Server | undefined;
      let client: Connection | undefined;
      let clientClosed: Promise<[CloseReason]> | undefined;
      {
        await using scoped = await listenTcp({ port: 0 }, (connection) => void connection.onRequest('echo', (params: unknown) => params));
        server = scoped.server;
        client = await connectTcp({ port: scoped.port });
        clientClosed = nextEvent<[CloseReason]>(client, 'close');
        expect(await client.sendRequest('echo', [1])).to.deep.equal([1]);
      }
      expect(server.listening).to.equal(false);
      expect((await clientClosed)[0]).to.equal('input ended');
    });

    it('listens on 127.0.0.1 and hands each accepted socket over as a connection', async () => {
      const client = await connectTcp({ port: listener!.port });
      expect(await client.sendRequest('echo', { over: 'tcp' })).to.deep.equal({ over: 'tcp' });
      expect(accepted).to.have.length(1);
      expect(accepted[0]!.socket.localAddress).to.equal('127.0.0.1');
      await client.close();
    });

    it('turns Nagle off (noDelay) on the sockets of both ends', async () => {
      const original = Socket.prototype.setNoDelay;
      const noDelay = new Map<Socket, boolean | undefined>();
      Socket.prototype.setNoDelay = function (this: Socket, enable?: boolean) {
        noDelay.set(this, enable);
        return original.call(this, enable);
      };
      let client: Connection;
      try {
        client = await connectTcp({ port: listener!.port });
        await client.sendRequest('echo', []);
      } finally {
        Socket.prototype.setNoDelay = original;
      }
      expect(noDelay.get(accepted[0]!.socket)).to.equal(true);
      expect([...noDelay.values()]).to.deep.equal([true, true]);
      await client.close();
    });

    it('close() closes the open connections, failing their pending requests, and stops listening', async () => {
      const client = await connectTcp({ port: listener!.port });
      const arrived = new Promise<void>((resolve) => {
        onHold = resolve;
      });
      const pending = client.sendRequest('hold');
      await arrived;
      const clientClosed = nextEvent<[CloseReason]>(client, 'close');
      await listener!.close();
      expect((await clientClosed)[0]).to.equal('input ended');
      const error = await pending.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'hold', reason: 'input ended' });
      expect(listener!.server.listening).to.equal(false);
      listener = undefined;
    });

    it('rejects with EADDRINUSE when the port is taken', async () => {
      const error = await listenTcp({ port: listener!.port }, () => {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.have.property('code', 'EADDRINUSE');
    });

    it('throws RangeError for an invalid port', () => {
      expect(() => listenTcp({ port: 70000 }, () => {})).to.throw(RangeError, /port/);
    });
  });

  describe('connectTcp()', () => {
    it('rejects with ECONNREFUSED when nothing listens on the port', async () => {
      const error = await connectTcp({ port: await freePort() }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.have.property('code', 'ECONNREFUSED');
    });

    it('throws RangeError for an invalid port', () => {
      expect(() => connectTcp({ port: 1.5 })).to.throw(RangeError, /port/);
    });

    it("closing the client connection closes the server's connection with 'input ended' and its socket", async () => {
      const client = await connectTcp({ port: listener!.port });
      await client.sendRequest('echo', []);
      const serverClosed = nextEvent<[CloseReason]>(accepted[0]!.connection, 'close');
      const socketClosed = once(accepted[0]!.socket, 'close');
      await client.close();
      expect((await serverClosed)[0]).to.equal('input ended');
      await socketClosed;
      expect(accepted[0]!.socket.destroyed).to.equal(true);
    });
  });
});
