/**
 * listenTcp's bounds: at most `maxConnections` at once, and an idle timeout
 * that never closes a connection with work in flight.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { nextEvent } from '../helpers/events';
import { connectTcp, listenTcp, type Connection, type LogLevel, type Logger, type TcpListener, type TcpListenOptions } from '../../lib';

/** A logger that keeps its records. */
function recordingLogger(): Logger & { records: string[] } {
  const records: string[] = [];
  return { traces: false, records, log: (level: LogLevel, message: string) => void records.push(`${level} ${message}`) };
}

/** A raw socket to `port`, connected. */
async function rawSocket(port: number): Promise<Socket> {
  const socket = createConnection({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  return socket;
}

describe('listenTcp() bounds', () => {
  let listener: TcpListener | undefined;
  let logger: ReturnType<typeof recordingLogger>;
  const accepted: Connection[] = [];
  const clients: Connection[] = [];
  const sockets: Socket[] = [];

  async function listen(options: TcpListenOptions): Promise<TcpListener> {
    listener = await listenTcp(
      { port: 0 },
      (connection) => {
        accepted.push(connection);
        connection.onRequest('echo', (params: unknown) => params);
        // Answers after `ms` of wall time: a request in flight across several idle timeouts.
        connection.onRequest('wait', async (params: { ms: number }) => {
          await delay(params.ms);
          return 'waited';
        });
      },
      { ...options, logger },
    );
    return listener;
  }

  async function client(): Promise<Connection> {
    const connection = await connectTcp({ port: listener!.port });
    clients.push(connection);
    return connection;
  }

  beforeEach(() => {
    logger = recordingLogger();
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(clients.splice(0).map((connection) => connection.close()));
    accepted.length = 0;
    await listener?.close();
    listener = undefined;
  });

  describe('maxConnections', () => {
    it('closes a socket accepted beyond maxConnections at once, with a warn line naming its peer', async () => {
      await listen({ maxConnections: 2 });
      for (const connection of [await client(), await client()]) expect(await connection.sendRequest('echo', [1])).to.deep.equal([1]);
      const third = await rawSocket(listener!.port);
      sockets.push(third);
      const port = third.localPort;
      await once(third, 'close');
      expect(accepted).to.have.length(2);
      expect(logger.records).to.deep.equal([`warn refused a client from 127.0.0.1:${port}: connection limit reached (2 open)`]);
    });

    it('serves a new client once a connection has closed', async () => {
      await listen({ maxConnections: 1 });
      const first = await client();
      expect(await first.sendRequest('echo', ['first'])).to.deep.equal(['first']);
      const closed = nextEvent(accepted[0]!, 'close');
      await first.close();
      await closed;
      expect(await (await client()).sendRequest('echo', ['second'])).to.deep.equal(['second']);
    });

    it('throws RangeError naming maxConnections for 0, 1.5 or -1, before listening', () => {
      for (const maxConnections of [0, 1.5, -1, Number.NaN]) {
        expect(() => listenTcp({ port: 0 }, () => {}, { maxConnections })).to.throw(RangeError, /maxConnections/);
      }
    });
  });

  describe('idleTimeoutMs', () => {
    it('closes a connection that carried nothing for idleTimeoutMs, with a debug line', async () => {
      // Far above the client's gap between connecting and sending its request.
      await listen({ idleTimeoutMs: 300 });
      const connection = await client();
      expect(await connection.sendRequest('echo', ['hi'])).to.deep.equal(['hi']);
      const [reason] = await nextEvent<[string]>(connection, 'close');
      expect(reason).to.equal('input ended');
      const idleLines = logger.records.filter((record) => record.includes('idle'));
      expect(idleLines).to.have.length(1);
      expect(idleLines[0]).to.match(/^debug closed the connection from 127\.0\.0\.1:\d+: idle for 300 ms$/);
    });

    it('keeps a connection open while a request it received is unanswered, however long it takes', async () => {
      // Timeouts far above the client's own gaps, which a loaded machine stretches (here and below).
      await listen({ idleTimeoutMs: 1000 });
      const connection = await client();
      expect(await connection.sendRequest('wait', { ms: 2000 })).to.equal('waited');
      await nextEvent(connection, 'close');
    });

    it('keeps a connection open while a request it sent is unanswered', async () => {
      await listen({ idleTimeoutMs: 1000 });
      const connection = await client();
      connection.onRequest('slow', async () => {
        await delay(2000);
        return 'late';
      });
      expect(await connection.sendRequest('echo', [0])).to.deep.equal([0]);
      expect(await accepted[0]!.sendRequest('slow')).to.equal('late');
    });

    it('keeps a connection whose request reached it while the process was too busy to read it past idleTimeoutMs', async () => {
      await listen({ idleTimeoutMs: 50 });
      const socket = await rawSocket(listener!.port);
      sockets.push(socket);
      const reply = new Promise<string>((resolve) => {
        socket.once('data', (chunk: Buffer) => resolve(String(chunk)));
        socket.once('close', () => resolve('closed'));
      });
      socket.write('{"jsonrpc":"2.0","id":1,"method":"echo","params":["late"]}\n');
      // Block the event loop past the idle timeout: its timer and the request's bytes are then due
      // in the same turn of the loop, and timers run before sockets are read.
      for (const until = Date.now() + 200; Date.now() < until; );
      expect(await reply).to.equal('{"jsonrpc":"2.0","id":1,"result":["late"]}\n');
      expect(logger.records.filter((record) => record.includes('idle'))).to.deep.equal([]);
    });

    it('throws RangeError naming idleTimeoutMs for -1, 1.5 or 2^31, before listening', () => {
      for (const idleTimeoutMs of [-1, 1.5, 2 ** 31, Number.POSITIVE_INFINITY]) {
        expect(() => listenTcp({ port: 0 }, () => {}, { idleTimeoutMs })).to.throw(RangeError, /idleTimeoutMs/);
      }
    });
  });
});
