/**
 * docs/wire.md over a real TCP socket on 127.0.0.1: exact NDJSON lines in and out of
 * `spec/fixtures/echo-peer.ts --tcp 0`, and the process-level contract of TCP peers and clients.
 */
import { expect } from 'chai';
import { ConnectionClosedError, connectTcp, listenTcp, type CloseReason } from '../../lib';
import { type SpawnedProcess, spawnFixture, stopAll, useBuild } from '../helpers/processes';
import { connectRaw, type RawSocket } from '../helpers/sockets';
import { itAnswersAsWireMdSays, itAnswersConcurrentRequests, spawnTcpEchoPeer } from '../helpers/wire';

describe('wire over TCP (echo-peer --tcp 0)', () => {
  useBuild();
  after(stopAll);

  describe('answers', () => {
    let peer: SpawnedProcess;
    let port: number;
    let socket: RawSocket;
    before(async () => {
      ({ peer, port } = await spawnTcpEchoPeer());
      socket = await connectRaw(port);
    });
    after(async () => {
      await socket.close();
      expect(await peer.stop()).to.deep.equal({ code: 0, signal: null });
    });

    itAnswersAsWireMdSays(() => ({ send: socket.send, lines: socket.lines }));

    itAnswersConcurrentRequests(() => ({ send: socket.send, lines: socket.lines }));

    it('keeps one connection state per socket: a second socket is answered independently', async () => {
      const second = await connectRaw(port);
      try {
        second.send({ jsonrpc: '2.0', method: 'only/second' }, { jsonrpc: '2.0', id: 1, method: 'notifications' });
        expect(await second.lines.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["only/second"]}']);
      } finally {
        await second.close();
      }
    });
  });

  describe('the peer process', () => {
    it('exits 0 by itself when its stdin ends, closing the sockets it accepted', async () => {
      const { peer, port } = await spawnTcpEchoPeer();
      const socket = await connectRaw(port);
      socket.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['before'] });
      await socket.lines.waitForLines(1);
      const socketClosed = new Promise<void>((resolve) => socket.socket.once('close', () => resolve()));
      peer.child.stdin!.end();
      await socketClosed;
      expect(await peer.exited).to.deep.equal({ code: 0, signal: null });
      expect(socket.lines.lines).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["before"]}']);
    });

    it('exiting mid-request rejects the pending requests with ConnectionClosedError', async () => {
      const { peer, port } = await spawnTcpEchoPeer();
      const connection = await connectTcp({ port });
      const sleeping = connection.sendRequest('sleep', { ms: 60_000 });
      const exiting = connection.sendRequest('exit', { code: 4 });
      const errors = await Promise.all(
        [sleeping, exiting].map((sent) =>
          sent.then(
            () => undefined,
            (error: unknown) => error,
          ),
        ),
      );
      expect(errors[0]).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'sleep', reason: 'input ended' });
      expect(errors[1]).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'exit', reason: 'input ended' });
      expect(await peer.exited).to.deep.equal({ code: 4, signal: null });
    });
  });

  describe('a client process', () => {
    it('exits 0 by itself after closing its TCP connection', async () => {
      let onServerClose!: (reason: CloseReason) => void;
      const serverClosed = new Promise<CloseReason>((resolve) => {
        onServerClose = resolve;
      });
      const listener = await listenTcp({ port: 0 }, (connection) => {
        connection.onRequest('log', () => true);
        connection.onRequest('echo', (params: unknown) => params);
        connection.once('close', onServerClose);
      });
      try {
        const client = spawnFixture('echo-client', ['--tcp', String(listener.port)]);
        expect(await client.exited).to.deep.equal({ code: 0, signal: null });
        expect(client.stdout.lines).to.deep.equal(['true', '{"hello":"world"}']);
        expect(client.stdout.rest).to.equal('');
        expect(await serverClosed).to.equal('input ended');
      } finally {
        await listener.close();
      }
    });
  });
});
