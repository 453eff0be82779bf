import { expect } from 'chai';
import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import {
  Connection,
  ConnectionClosedError,
  NotificationHandlerError,
  ProtocolError,
  RpcError,
  SerializationError,
  createConnectionPair,
  type AcpWireError,
  type CloseReason,
} from '../lib';
import { deferred, macrotasks, rejectionOf } from './helpers/async';
import { errorsOf, listenerCounts, nextEvent } from './helpers/events';
import { writeLines } from './helpers/lines';
import { HeldWritable, RawPeer } from './helpers/peers';

describe('Connection', () => {
  let peer: RawPeer;
  beforeEach(() => {
    peer = new RawPeer();
  });
  afterEach(() => peer.connection.close());

  describe('events', () => {
    it("never emits 'error': events.once(connection, 'close') is not rejected by a bad line while the connection stays open", async () => {
      const closed = once(peer.connection, 'close');
      const warned = nextEvent<[AcpWireError]>(peer.connection, 'warning');
      peer.send('not json');
      expect((await warned)[0]).to.have.property('code', 'ACP_WIRE_JSON_PARSE');
      expect(peer.connection.isClosed).to.equal(false);
      await peer.connection.close();
      expect(await closed).to.deep.equal(['closed locally', undefined]);
    });

    it('takes any number of listeners of one event without a MaxListenersExceededWarning', async () => {
      const warnings: Error[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning);
      process.on('warning', onWarning);
      try {
        const listeners = Array.from({ length: 20 }, () => () => {});
        for (const listener of listeners) peer.connection.on('drain', listener);
        await macrotasks(1);
        for (const listener of listeners) peer.connection.off('drain', listener);
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings.map((warning) => warning.name)).to.deep.equal([]);
    });
  });

  describe('[Symbol.asyncDispose]()', () => {
    it('closes the connection when an `await using` block is left', async () => {
      const other = new RawPeer();
      {
        await using connection = other.connection;
        connection.onRequest('echo', (params: unknown) => params);
        other.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: [1] });
        expect(await other.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":[1]}']);
      }
      expect(other.connection.closeReason).to.equal('closed locally');
      expect(other.output.writableEnded).to.equal(true);
    });
  });

  describe('constructor', () => {
    it('throws TypeError when the input is not a readable stream', () => {
      expect(() => new Connection(undefined as unknown as PassThrough, new PassThrough())).to.throw(TypeError, /input/);
    });

    it('throws TypeError when the output is not a writable stream', () => {
      expect(() => new Connection(new PassThrough(), {} as unknown as Writable)).to.throw(TypeError, /output/);
    });
  });

  describe('#sendRequest()', () => {
    it('writes one request line per call with ids 1, 2, 3 in call order', async () => {
      const sent = [peer.connection.sendRequest('a', { x: 1 }), peer.connection.sendRequest('b'), peer.connection.sendRequest('c', [1])];
      expect(await peer.out.waitForLines(3)).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1}}',
        '{"jsonrpc":"2.0","id":2,"method":"b"}',
        '{"jsonrpc":"2.0","id":3,"method":"c","params":[1]}',
      ]);
      expect(sent.map((request) => request.id)).to.deep.equal([1, 2, 3]);
      peer.send(...[1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, result: id })));
      expect(await Promise.all(sent)).to.deep.equal([1, 2, 3]);
    });

    it('allocates ids per connection: each connection starts at 1', async () => {
      const other = new RawPeer();
      try {
        const first = peer.connection.sendRequest('m');
        const second = other.connection.sendRequest('m');
        expect([first.id, second.id]).to.deep.equal([1, 1]);
        first.detach();
        second.detach();
      } finally {
        await other.connection.close();
      }
    });

    it('resolves with the result of the response whose id matches', async () => {
      const first = peer.connection.sendRequest('first');
      const second = peer.connection.sendRequest('second');
      peer.send({ jsonrpc: '2.0', id: 2, result: 'two' }, { jsonrpc: '2.0', id: 1, result: { one: [1] } });
      expect(await second).to.equal('two');
      expect(await first).to.deep.equal({ one: [1] });
    });

    it('rejects with an RpcError carrying the code, message and data of an error response', async () => {
      const sent = peer.connection.sendRequest('m');
      peer.send({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Nope', data: { why: 'because' } } });
      const error = await rejectionOf(sent);
      expect(error).to.be.instanceOf(RpcError).and.include({ code: -32001, message: 'Nope' });
      expect((error as RpcError).data).to.deep.equal({ why: 'because' });
    });

    it('does not match a response whose id is the string "1" to the request with id 1', async () => {
      const errors = errorsOf(peer.connection);
      const sent = peer.connection.sendRequest('m');
      const reported = nextEvent(peer.connection, 'warning');
      peer.send({ jsonrpc: '2.0', id: '1', result: 'wrong' });
      await reported;
      expect(errors[0]).to.be.instanceOf(ProtocolError);
      expect(sent.isSettled).to.equal(false);
      peer.send({ jsonrpc: '2.0', id: 1, result: 'right' });
      expect(await sent).to.equal('right');
    });

    it('matches a response with id 1.0 to the request with id 1 (same JSON number)', async () => {
      const sent = peer.connection.sendRequest('m');
      peer.send('{"jsonrpc":"2.0","id":1.0,"result":"ok"}');
      expect(await sent).to.equal('ok');
    });

    it('discards a late second response with an error event and sends nothing back', async () => {
      const sent = peer.connection.sendRequest('m');
      await peer.out.waitForLines(1);
      peer.send({ jsonrpc: '2.0', id: 1, result: 'first' });
      expect(await sent).to.equal('first');
      const errors = errorsOf(peer.connection);
      peer.send({ jsonrpc: '2.0', id: 1, result: 'late' }, { jsonrpc: '2.0', id: 'sentinel', method: 'unknown' });
      const [line] = await peer.out.next(1);
      expect(line).to.equal('{"jsonrpc":"2.0","id":"sentinel","error":{"code":-32601,"message":"Method not found","data":"unknown"}}');
      expect(errors).to.have.length(1);
      expect(errors[0]).to.be.instanceOf(ProtocolError);
    });

    it('discards a response with an unknown id with an error event and sends nothing back', async () => {
      const errors = errorsOf(peer.connection);
      peer.send({ jsonrpc: '2.0', id: 99, error: { code: 1, message: 'x' } }, { jsonrpc: '2.0', id: 's', method: 'unknown' });
      expect(await peer.out.waitForLines(1)).to.deep.equal([
        '{"jsonrpc":"2.0","id":"s","error":{"code":-32601,"message":"Method not found","data":"unknown"}}',
      ]);
      expect(errors.map((error) => error.code)).to.deep.equal(['ACP_WIRE_PROTOCOL']);
      expect(peer.connection.isClosed).to.equal(false);
    });

    it('rejects at once with ConnectionClosedError naming the method when the connection is closed', async () => {
      await peer.connection.close();
      const sent = peer.connection.sendRequest('late');
      expect(sent.isSettled).to.equal(true);
      const error = await rejectionOf(sent);
      expect(error).to.be.instanceOf(ConnectionClosedError).and.include({ reason: 'closed locally', method: 'late' });
      expect(peer.out.lines).to.deep.equal([]);
    });

    it('throws SerializationError and sends nothing when the params cannot be serialized', async () => {
      expect(() => peer.connection.sendRequest('m', { n: 1n })).to.throw(SerializationError);
      expect(peer.connection.pendingCount).to.equal(0);
      const ok = peer.connection.sendRequest('ok');
      const [line] = await peer.out.waitForLines(1);
      expect(JSON.parse(line!)).to.include({ method: 'ok' });
      ok.detach();
    });

    it('throws TypeError when the method is not a string', () => {
      expect(() => peer.connection.sendRequest(42 as unknown as string)).to.throw(TypeError, /method/);
    });
  });

  describe('#sendNotification()', () => {
    it('writes one notification line with the params', async () => {
      peer.connection.sendNotification('note', { a: [1, null] });
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","method":"note","params":{"a":[1,null]}}']);
    });

    it('writes a notification line without params when none are given', async () => {
      peer.connection.sendNotification('note');
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","method":"note"}']);
    });

    it('throws ConnectionClosedError after close', async () => {
      await peer.connection.close();
      expect(() => peer.connection.sendNotification('note'))
        .to.throw(ConnectionClosedError)
        .with.property('reason', 'closed locally');
    });

    it('throws SerializationError and sends nothing when the params cannot be serialized', async () => {
      expect(() => peer.connection.sendNotification('note', { n: 1n })).to.throw(SerializationError);
      peer.connection.sendNotification('after');
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","method":"after"}']);
    });
  });

  describe('dispatch', () => {
    it('answers a request for an unknown method -32601 with data naming the method', async () => {
      peer.send({ jsonrpc: '2.0', id: 5, method: 'no/such' });
      expect(await peer.out.waitForLines(1)).to.deep.equal([
        '{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found","data":"no/such"}}',
      ]);
    });

    it('ignores unhandled notifications of any method and sends nothing', async () => {
      const errors = errorsOf(peer.connection);
      peer.send(
        { jsonrpc: '2.0', method: 'no/such' },
        { jsonrpc: '2.0', method: '$/progress', params: { x: 1 } },
        { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 404 } },
        { jsonrpc: '2.0', id: 'sentinel', method: 'unknown' },
      );
      const [line] = await peer.out.waitForLines(1);
      expect(JSON.parse(line!)).to.include({ id: 'sentinel' });
      expect(peer.out.lines).to.have.length(1);
      expect(errors).to.deep.equal([]);
    });

    it("goes on after a non-fatal error even when nobody listens to 'warning'", async () => {
      expect(peer.connection.listenerCount('warning')).to.equal(0);
      peer.send('not json', { jsonrpc: '2.0', id: 2, method: 'unknown' });
      expect(await peer.out.waitForLines(2)).to.deep.equal([
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":"unknown"}}',
      ]);
      expect(peer.connection.isClosed).to.equal(false);
    });

    it('runs the handler of a notification before the handler of a request that arrived after it', async () => {
      const order: string[] = [];
      peer.connection.onNotification('first', () => void order.push('notification'));
      peer.connection.onRequest('second', async () => {
        order.push('request');
        return null;
      });
      peer.send({ jsonrpc: '2.0', method: 'first' }, { jsonrpc: '2.0', id: 1, method: 'second' });
      await peer.out.waitForLines(1);
      expect(order).to.deep.equal(['notification', 'request']);
    });

    it('calls handlers while the chunk that carries their messages is being delivered (no extra event-loop hop)', async () => {
      const order: string[] = [];
      peer.connection.onNotification('note', () => void order.push('notification handler'));
      peer.connection.onRequest('req', () => {
        order.push('request handler');
        return 1;
      });
      const delivered = new Promise<void>((resolve) => {
        // Registered after the connection's own 'data' listener, so it runs right after it.
        peer.input.once('data', () => {
          order.push('chunk delivered');
          resolve();
        });
      });
      peer.send({ jsonrpc: '2.0', method: 'note' }, { jsonrpc: '2.0', id: 1, method: 'req' });
      await delivered;
      expect(order).to.deep.equal(['notification handler', 'request handler', 'chunk delivered']);
    });

    it('runs request handlers concurrently: a second slow handler starts before the first finishes', async () => {
      const [client, agent] = createConnectionPair();
      try {
        const bothStarted = deferred();
        let running = 0;
        let mostRunning = 0;
        agent.onRequest('slow', async () => {
          running++;
          mostRunning = Math.max(mostRunning, running);
          if (running === 2) bothStarted.resolve();
          await bothStarted.promise;
          running--;
          return 'done';
        });
        expect(await Promise.all([client.sendRequest('slow'), client.sendRequest('slow')])).to.deep.equal(['done', 'done']);
        expect(mostRunning).to.equal(2);
      } finally {
        await Promise.all([client.close(), agent.close()]);
      }
    });

    it('reports a throwing notification handler as NotificationHandlerError and sends nothing', async () => {
      const cause = new Error('handler broke');
      peer.connection.onNotification('note', () => {
        throw cause;
      });
      const reported = nextEvent<[AcpWireError]>(peer.connection, 'warning');
      peer.send({ jsonrpc: '2.0', method: 'note' });
      const [error] = await reported;
      expect(error).to.be.instanceOf(NotificationHandlerError).and.include({ method: 'note', cause });
      peer.send({ jsonrpc: '2.0', id: 's', method: 'unknown' });
      const [line] = await peer.out.waitForLines(1);
      expect(JSON.parse(line!)).to.include({ id: 's' });
    });

    it('reports a rejecting notification handler as NotificationHandlerError and sends nothing', async () => {
      peer.connection.onNotification('note', () => Promise.reject(new Error('async break')));
      const reported = nextEvent<[AcpWireError]>(peer.connection, 'warning');
      peer.send({ jsonrpc: '2.0', method: 'note' });
      const [error] = await reported;
      expect(error).to.be.instanceOf(NotificationHandlerError);
      expect((error as Error).cause).to.have.property('message', 'async break');
      peer.send({ jsonrpc: '2.0', id: 's', method: 'unknown' });
      expect(await peer.out.waitForLines(1)).to.have.length(1);
    });
  });

  describe('#close()', () => {
    it('rejects pending requests with ConnectionClosedError naming the reason and the method', async () => {
      const sent = peer.connection.sendRequest('pending/one');
      void peer.connection.close();
      const error = await rejectionOf(sent);
      expect(error).to.be.instanceOf(ConnectionClosedError).and.include({ reason: 'closed locally', method: 'pending/one' });
      expect(peer.connection.pendingCount).to.equal(0);
    });

    it("emits 'close' once, even when called twice and the input then ends and errors", async () => {
      const reasons: CloseReason[] = [];
      peer.connection.on('close', (reason) => reasons.push(reason));
      const first = peer.connection.close();
      const second = peer.connection.close();
      await Promise.all([first, second]);
      const inputClosed = once(peer.input, 'close');
      peer.input.resume();
      peer.input.end();
      await inputClosed; // after 'end'
      peer.input.emit('error', new Error('late input error'));
      expect(reasons).to.deep.equal(['closed locally']);
      expect(peer.connection.isClosed).to.equal(true);
      expect(peer.connection.closeReason).to.equal('closed locally');
    });

    it('flushes queued lines, then ends the output and resolves', async () => {
      peer.connection.sendNotification('last');
      await peer.connection.close();
      expect(peer.output.writableEnded).to.equal(true);
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","method":"last"}']);
    });

    it('leaves the output open when endOutputOnClose is false', async () => {
      const input = new PassThrough();
      const output = new PassThrough();
      await new Connection(input, output, { endOutputOnClose: false }).close();
      expect(output.writableEnded).to.equal(false);
      output.end();
    });

    it('sends nothing for a request whose handler answers after the close', async () => {
      const holding = deferred<(value: string) => void>();
      peer.connection.onRequest('hold', (_params, responder) => holding.resolve((value) => responder.respond(value)));
      peer.send({ jsonrpc: '2.0', id: 1, method: 'hold' });
      const respond = await holding.promise;
      await peer.connection.close();
      respond('too late');
      await macrotasks();
      expect(peer.out.lines).to.deep.equal([]);
    });

    it('removes the listeners it added to its streams, leaving one guard against late stream errors', async () => {
      const input = new PassThrough();
      const output = new HeldWritable();
      output.release(false);
      const before = { input: listenerCounts(input), output: listenerCounts(output) };
      const connection = new Connection(input, output);
      await connection.close();
      const guard = { error: 1 };
      expect(listenerCounts(input)).to.deep.equal({ ...before.input, ...guard });
      expect(listenerCounts(output)).to.deep.equal({ ...before.output, ...guard });
      expect(() => input.emit('error', new Error('late'))).not.to.throw();
      expect(() => output.emit('error', new Error('late EPIPE'))).not.to.throw();
    });
  });

  describe('closing by the streams', () => {
    it("closes with reason 'input ended' when the input ends, rejecting pending requests", async () => {
      const sent = peer.connection.sendRequest('m');
      const closed = nextEvent<[CloseReason, Error?]>(peer.connection, 'close');
      peer.input.end();
      expect(await closed).to.deep.equal(['input ended', undefined]);
      expect(await rejectionOf(sent))
        .to.be.instanceOf(ConnectionClosedError)
        .and.include({ reason: 'input ended', method: 'm' });
    });

    it('decodes a last line without a newline when the input ends', async () => {
      peer.connection.onRequest('echo', (params: unknown) => params);
      const closed = nextEvent(peer.connection, 'close');
      peer.input.end('{"jsonrpc":"2.0","id":1,"method":"echo","params":["last"]}');
      await closed;
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["last"]}']);
    });

    it('discards a partial line, however large, when the input is destroyed instead of ended', async () => {
      const warnings = errorsOf(peer.connection);
      peer.connection.onRequest('echo', (params: unknown) => params);
      const closed = nextEvent<[CloseReason, Error?]>(peer.connection, 'close');
      peer.input.write('{"jsonrpc":"2.0","id":1,"method":"echo","params":["complete JSON, unfinished line"]}');
      peer.input.write(`\n{"jsonrpc":"2.0","id":2,"method":"echo","params":["${'x'.repeat(4 * 1024 * 1024)}`);
      peer.input.destroy();
      expect(await closed).to.deep.equal(['input ended', undefined]);
      const secondLine = peer.out.waitForLines(2).then(
        () => 'a second line',
        () => 'the output ended first',
      );
      expect(await secondLine).to.equal('the output ended first');
      expect(peer.out.lines).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["complete JSON, unfinished line"]}']);
      expect(warnings, 'the partial line was not parsed').to.deep.equal([]);
    });

    it("closes with reason 'input error' and the error when the input errors", async () => {
      const sent = peer.connection.sendRequest('m');
      const closed = nextEvent<[CloseReason, Error?]>(peer.connection, 'close');
      const failure = new Error('read failed');
      peer.input.destroy(failure);
      expect(await closed).to.deep.equal(['input error', failure]);
      const error = await rejectionOf(sent);
      expect(error).to.be.instanceOf(ConnectionClosedError).and.include({ reason: 'input error', method: 'm', cause: failure });
    });

    it("closes with reason 'output error' and the error when the output errors", async () => {
      const sent = peer.connection.sendRequest('m');
      const closed = nextEvent<[CloseReason, Error?]>(peer.connection, 'close');
      const failure = new Error('EPIPE');
      peer.output.destroy(failure);
      expect(await closed).to.deep.equal(['output error', failure]);
      expect(await rejectionOf(sent))
        .to.be.instanceOf(ConnectionClosedError)
        .and.include({ reason: 'output error' });
    });
  });

  describe('writing', () => {
    it('writes the answers to one chunk of requests in two write() calls: the synchronous ones, then the asynchronous ones', async () => {
      const input = new PassThrough();
      const writes: string[] = [];
      const output = new Writable({
        write(chunk: Buffer, _encoding, done) {
          writes.push(chunk.toString());
          done();
        },
      });
      const connection = new Connection(input, output);
      try {
        connection.onRequest('sync', ({ n }: { n: number }) => n);
        connection.onRequest('async', async ({ n }: { n: number }) => {
          await Promise.resolve();
          return n;
        });
        const requests = Array.from({ length: 20 }, (_, n) => ({ jsonrpc: '2.0', id: n, method: n % 2 ? 'async' : 'sync', params: { n } }));
        input.write(requests.map((request) => `${JSON.stringify(request)}\n`).join(''));
        await macrotasks(2);
        expect(writes).to.have.length(2);
        const ids = writes.map((chunk) =>
          chunk
            .trimEnd()
            .split('\n')
            .map((line) => (JSON.parse(line) as { id: number }).id),
        );
        expect(ids).to.deep.equal([
          [0, 2, 4, 6, 8, 10, 12, 14, 16, 18],
          [1, 3, 5, 7, 9, 11, 13, 15, 17, 19],
        ]);
      } finally {
        await connection.close();
      }
    });

    it("writes a long burst to an in-process stream each time its lines reach the stream's high-water mark, as it is sent", async () => {
      const writes: string[] = [];
      const output = new Writable({
        write(chunk: Buffer, _encoding, done) {
          writes.push(chunk.toString());
          done();
        },
      });
      const connection = new Connection(new PassThrough(), output);
      try {
        const held: number[] = [];
        for (let n = 0; n < 2000; n++) {
          connection.sendNotification('note', { n, uri: 'file:///repo/src/index.ts' });
          held.push(connection.writableLength);
        }
        // Written before the sending loop returned, not in one write at the flush.
        const writtenWhileSending = writes.length;
        expect(writtenWhileSending).to.be.at.least(5);
        expect(Math.max(...held)).to.be.lessThan(output.writableHighWaterMark);
        await macrotasks(1);
        const lines = writes.join('').trimEnd().split('\n');
        expect(lines.map((line) => (JSON.parse(line) as { params: { n: number } }).params.n)).to.deep.equal(
          Array.from({ length: 2000 }, (_, n) => n),
        );
        const mark = output.writableHighWaterMark;
        for (const chunk of writes.slice(0, writtenWhileSending)) expect(chunk.length).to.be.within(mark, mark + 100);
      } finally {
        await connection.close();
      }
    });

    it('writes a message of 64 KiB or more as a chunk of its own, its newline opening the next chunk, in one corked burst', async () => {
      const writes: string[] = [];
      let writevs = 0;
      const output = new Writable({
        decodeStrings: false,
        writev(chunks, done) {
          writevs++;
          for (const { chunk } of chunks) writes.push(String(chunk));
          done();
        },
      });
      const connection = new Connection(new PassThrough(), output);
      try {
        const long = 'L'.repeat(64 * 1024);
        connection.sendNotification('a');
        connection.sendNotification('long', [long]);
        connection.sendNotification('b');
        connection.sendNotification('long', [long]);
        await macrotasks(1);
        const longLine = `{"jsonrpc":"2.0","method":"long","params":["${long}"]}`;
        expect(writes).to.deep.equal(['{"jsonrpc":"2.0","method":"a"}\n', longLine, '\n{"jsonrpc":"2.0","method":"b"}\n', longLine, '\n']);
        expect(writevs).to.equal(1);
      } finally {
        await connection.close();
      }
    });
  });

  describe('backpressure', () => {
    // Holding rather than pausing at once: two peers flooding each other must not deadlock;
    // pausing the input past the backlog limit is covered in spec/faults/backpressure.spec.ts.
    it("holds what it reads undispatched while the output's write() returns false, and dispatches it on 'drain'", async () => {
      const input = new PassThrough();
      const output = new HeldWritable();
      const connection = new Connection(input, output);
      try {
        const seen: number[] = [];
        const secondSeen = deferred();
        connection.onRequest('n', ({ n }: { n: number }) => {
          seen.push(n);
          if (n === 2) secondSeen.resolve();
          return n;
        });
        writeLines(input, { jsonrpc: '2.0', id: 1, method: 'n', params: { n: 1 } });
        await output.nextWrite();
        await macrotasks(1);
        writeLines(input, { jsonrpc: '2.0', id: 2, method: 'n', params: { n: 2 } });
        await macrotasks();
        expect(seen).to.deep.equal([1]);
        output.release();
        await secondSeen.promise;
        expect(seen).to.deep.equal([1, 2]);
      } finally {
        output.release(false);
        await connection.close();
      }
    });
  });
});
