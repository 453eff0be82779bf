/**
 * The WebSocket transport: docs/wire.md's exact answers with one message per text frame, the
 * client, frame errors with their close codes, and each socket as its own connection.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { Duplex } from 'node:stream';
import {
  Connection,
  ConnectionClosedError,
  HttpStatusError,
  WebSocketCloseError,
  connectWebSocket,
  listenRemote,
  listenRemoteStreams,
  type RemoteClientInfo,
  type RemoteListener,
} from '../../lib';
import { deferred, rejectionOf } from '../helpers/async';
import { itAnswersAsWireMdSays } from '../helpers/wire';
import { closeOf, connectRawWebSocket, expectTcpHandles, serveEcho, tcpHandles, type RawWebSocket } from './remote-helpers';

describe('WebSocket transport', () => {
  let baseline: number;
  let listener: RemoteListener;
  let accepted: { connection: Connection; info: RemoteClientInfo; closed: ReturnType<typeof closeOf> }[];

  beforeEach(async () => {
    baseline = tcpHandles();
    accepted = [];
    listener = await listenRemote({ maxPayload: 1024 }, (connection, info) => {
      accepted.push({ connection, info, closed: closeOf(connection) });
      serveEcho(connection);
    });
  });

  afterEach(async () => {
    await listener.close();
    await expectTcpHandles(baseline);
  });

  describe('wire answers over text frames (docs/wire.md)', () => {
    let socket: RawWebSocket;
    beforeEach(async () => {
      socket = await connectRawWebSocket(listener.url);
    });
    afterEach(async () => {
      expect(await socket.close()).to.deep.include({ code: 1000 });
    });

    itAnswersAsWireMdSays(() => ({ send: socket.send, lines: socket.lines }));

    it('answers a pretty-printed frame (newlines between tokens) as the same message', async () => {
      socket.send('{\n  "jsonrpc": "2.0",\n  "id": 1.50,\n  "method": "echo",\n  "params": ["a\\nb"]\n}');
      expect(await socket.lines.next()).to.deep.equal(['{"jsonrpc":"2.0","id":1.50,"result":["a\\nb"]}']);
    });

    it('answers two messages in one frame with one -32700, not two answers', async () => {
      socket.send('{"jsonrpc":"2.0","id":1,"method":"echo"}\n{"jsonrpc":"2.0","id":2,"method":"echo"}', {
        jsonrpc: '2.0',
        id: 3,
        method: 'echo',
      });
      expect(await socket.lines.next(2)).to.deep.equal([
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        '{"jsonrpc":"2.0","id":3,"result":null}',
      ]);
    });

    it('answers a frame whose string holds a raw newline with -32700', async () => {
      socket.send('{"jsonrpc":"2.0","id":1,"method":"echo","params":["a\nb"]}', { jsonrpc: '2.0', id: 2, method: 'echo' });
      expect(await socket.lines.next(2)).to.deep.equal([
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        '{"jsonrpc":"2.0","id":2,"result":null}',
      ]);
    });

    it('skips a blank frame', async () => {
      socket.send(' \n\t', '', { jsonrpc: '2.0', id: 'after', method: 'echo' });
      expect(await socket.lines.next()).to.deep.equal(['{"jsonrpc":"2.0","id":"after","result":null}']);
    });

    it('sends each answer as exactly one text frame', async () => {
      const frames: string[] = [];
      socket.ws.on('message', (data: Buffer) => frames.push(data.toString('utf8')));
      socket.send(...Array.from({ length: 50 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'echo', params: [id] })));
      await socket.lines.next(50);
      expect(frames).to.deep.equal(Array.from({ length: 50 }, (_, id) => `{"jsonrpc":"2.0","id":${id},"result":[${id}]}`));
    });
  });

  describe('frames it does not accept', () => {
    it('closes with 1003 and a local WebSocketCloseError on a binary frame', async () => {
      const socket = await connectRawWebSocket(listener.url);
      socket.ws.send(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"echo"}'), { binary: true });
      expect(await socket.closed).to.deep.include({ code: 1003 });
      const { reason, error } = await accepted[0]!.closed;
      expect(reason).to.equal('input error');
      expect(error)
        .to.be.instanceOf(WebSocketCloseError)
        .and.include({ closeCode: 1003, isLocal: true, code: 'ACP_WIRE_WEBSOCKET_CLOSED' });
    });

    it('closes with 1009 on a frame over maxPayload', async () => {
      const socket = await connectRawWebSocket(listener.url);
      socket.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['x'.repeat(2000)] });
      expect(await socket.closed).to.deep.include({ code: 1009 });
      const { error } = await accepted[0]!.closed;
      expect(error).to.be.instanceOf(WebSocketCloseError).and.include({ closeCode: 1009, isLocal: true });
    });

    it('closes with 1007 on a text frame that is not UTF-8', async () => {
      const socket = await connectRawWebSocket(listener.url);
      socket.ws.send(Buffer.from([0x22, 0xff, 0xfe, 0x22]), { binary: false });
      expect(await socket.closed).to.deep.include({ code: 1007 });
      const { error } = await accepted[0]!.closed;
      expect(error).to.be.instanceOf(WebSocketCloseError).and.include({ closeCode: 1007 });
    });

    it('answers a frame of exactly maxPayload bytes', async () => {
      const socket = await connectRawWebSocket(listener.url);
      const head = '{"jsonrpc":"2.0","id":1,"method":"echo","params":["';
      const frame = `${head + 'y'.repeat(1024 - head.length - 3)}"]}`;
      expect(Buffer.byteLength(frame)).to.equal(1024);
      socket.send(frame);
      expect(await socket.lines.next()).to.deep.equal([`{"jsonrpc":"2.0","id":1,"result":["${'y'.repeat(1024 - head.length - 3)}"]}`]);
      await socket.close();
    });
  });

  describe('connectWebSocket()', () => {
    it('runs requests both ways and closes with 1000', async () => {
      const client = await connectWebSocket(listener.url);
      client.onRequest('client/ping', () => 'pong');
      expect(await client.sendRequest('echo', { hello: 'world' })).to.deep.equal({ hello: 'world' });
      const agent = accepted[0]!.connection;
      expect(await agent.sendRequest('client/ping')).to.equal('pong');
      const agentClosed = accepted[0]!.closed;
      await client.close();
      expect(await agentClosed).to.deep.equal({ reason: 'input ended', error: undefined });
    });

    it('sends custom headers and the token on the upgrade request', async () => {
      const client = await connectWebSocket(listener.url, { headers: { 'X-Editor': 'spec' }, token: 'abc' });
      await client.sendRequest('echo');
      expect(accepted[0]!.info.request.headers).to.include({ 'x-editor': 'spec', authorization: 'Bearer abc' });
      expect(accepted[0]!.info.transport).to.equal('websocket');
      await client.close();
    });

    it('gives each socket its own connection state', async () => {
      const first = await connectWebSocket(listener.url);
      const second = await connectWebSocket(listener.url);
      first.sendNotification('only/first');
      second.sendNotification('only/second');
      expect(await first.sendRequest('notifications')).to.deep.equal(['only/first']);
      expect(await second.sendRequest('notifications')).to.deep.equal(['only/second']);
      expect(listener.clientCount).to.equal(2);
      await Promise.all([first.close(), second.close()]);
    });

    it('rejects pending requests with ConnectionClosedError when the server closes', async () => {
      const client = await connectWebSocket(listener.url);
      const sleeping = client.sendRequest('sleep', { ms: 60_000 });
      await client.sendRequest('echo');
      await listener.close();
      const error = await rejectionOf(sleeping);
      expect(error).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'sleep' });
    });

    it('rejects with HttpStatusError 404 for a wrong path', async () => {
      const error = await rejectionOf(connectWebSocket(listener.url.replace('/acp', '/other')));
      expect(error).to.be.instanceOf(HttpStatusError).and.include({ status: 404, code: 'ACP_WIRE_HTTP_STATUS' });
    });

    it('rejects with the network error when nothing listens', async () => {
      const { port } = listener;
      await listener.close();
      const error = await rejectionOf(connectWebSocket(`ws://127.0.0.1:${port}/acp`));
      expect(error).to.include({ code: 'ECONNREFUSED' });
    });

    it('validates its options', () => {
      expect(() => connectWebSocket('http://127.0.0.1:1/acp')).to.throw(TypeError, /ws:\/\/ or wss:\/\//);
      expect(() => connectWebSocket(listener.url, { maxPayload: 0 })).to.throw(RangeError, /maxPayload/);
      expect(() => connectWebSocket(listener.url, { heartbeat: { intervalMs: -1 } })).to.throw(RangeError, /heartbeat\.intervalMs/);
    });
  });

  describe('flow control', () => {
    it('delivers every answer once and in order to a client that paused reading, and stays open', async function () {
      this.timeout(60_000);
      const socket = await connectRawWebSocket(listener.url);
      const big = 'z'.repeat(900);
      socket.send({ jsonrpc: '2.0', id: 0, method: 'echo' });
      await socket.lines.next();
      socket.ws.pause();
      // Many answers of ~1 KB each: far more than any buffer, so the server must stop reading.
      const count = 20_000;
      for (let id = 1; id <= count; id++)
        socket.send({ jsonrpc: '2.0', id, method: 'echo', params: [big.slice(0, 900 - String(id).length)] });
      await new Promise((resolve) => socket.ws.send(' ', resolve));
      const agent = accepted[0]!.connection;
      socket.ws.resume();
      const lines = await socket.lines.waitForLines(count + 1, 55_000); // within this test's 60 s
      expect(lines.slice(1).map((line) => (JSON.parse(line) as { id: number }).id)).to.deep.equal(
        Array.from({ length: count }, (_, i) => i + 1),
      );
      expect(agent.isClosed).to.equal(false);
      await socket.close();
    });
  });

  describe('message framing', () => {
    const long = 'L'.repeat(100 * 1024);

    it('answers, in order, the frames a stream received before a connection took it over', async () => {
      const streams: Duplex[] = [];
      const arrived = deferred<void>();
      const roomy = await listenRemoteStreams({}, (stream) => {
        streams.push(stream);
        stream.pause();
        stream.once('readable', () => arrived.resolve());
      });
      const socket = await connectRawWebSocket(roomy.url);
      try {
        socket.send(
          { jsonrpc: '2.0', id: 1, method: 'echo', params: ['first'] },
          { jsonrpc: '2.0', id: 2, method: 'echo', params: ['second'] },
        );
        await arrived.promise;
        const connection = new Connection(streams[0]!, streams[0]!);
        connection.once('close', () => streams[0]!.destroy());
        serveEcho(connection);
        socket.send({ jsonrpc: '2.0', id: 3, method: 'echo', params: ['third'] });
        expect(await socket.lines.waitForLines(3)).to.deep.equal([
          '{"jsonrpc":"2.0","id":1,"result":["first"]}',
          '{"jsonrpc":"2.0","id":2,"result":["second"]}',
          '{"jsonrpc":"2.0","id":3,"result":["third"]}',
        ]);
        await connection.close();
      } finally {
        await socket.close();
        await roomy.close();
      }
    });

    it('answers a frame of 64 KiB or more with exactly one text frame per message, in order', async () => {
      const roomy = await listenRemote({}, (connection) => serveEcho(connection));
      const socket = await connectRawWebSocket(roomy.url);
      try {
        const frames: string[] = [];
        socket.ws.on('message', (data: Buffer) => frames.push(data.toString('utf8')));
        socket.send(
          { jsonrpc: '2.0', id: 1, method: 'echo', params: [long] },
          { jsonrpc: '2.0', id: 2, method: 'echo', params: ['short'] },
        );
        await socket.lines.waitForLines(2);
        expect(frames).to.deep.equal([`{"jsonrpc":"2.0","id":1,"result":["${long}"]}`, '{"jsonrpc":"2.0","id":2,"result":["short"]}']);
      } finally {
        await socket.close();
        await roomy.close();
      }
    });

    it('sends a request of 64 KiB or more from connectWebSocket() as exactly one text frame', async () => {
      const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      await once(server, 'listening');
      const frames: string[] = [];
      server.on('connection', (ws) => ws.on('message', (data: Buffer) => frames.push(data.toString('utf8'))));
      const client = await connectWebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, { heartbeat: false });
      try {
        client.sendNotification('long', [long]);
        client.sendNotification('short');
        while (frames.length < 2) await once(server.clients.values().next().value!, 'message');
        expect(frames).to.deep.equal([`{"jsonrpc":"2.0","method":"long","params":["${long}"]}`, '{"jsonrpc":"2.0","method":"short"}']);
      } finally {
        await client.close();
        for (const ws of server.clients) ws.terminate();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});
