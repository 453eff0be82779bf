/**
 * Answering a received request: through the Responder, or with the handler's return value or
 * thrown error. (Cancellation and automatic answers for dropped responders: spec/cancellation/.)
 */
import { expect } from 'chai';
import { AlreadyAnsweredError, RpcError, SerializationError, createStderrLogger, type Responder } from '../lib';
import { deferred, macrotasks } from './helpers/async';
import { RawPeer } from './helpers/peers';

const REQUEST = { jsonrpc: '2.0', id: 1, method: 'm' } as const;

describe('Responder', () => {
  let peer: RawPeer;
  beforeEach(() => {
    peer = new RawPeer();
  });
  afterEach(() => peer.connection.close());

  /** Registers `m`, sends one request for it and resolves with the responder once the handler ran. */
  async function receive(request: object = REQUEST): Promise<Responder> {
    const received = deferred<Responder>();
    peer.connection.onRequest('m', (_params, responder) => received.resolve(responder));
    peer.send(request);
    return received.promise;
  }

  /** Sends a request nobody handles and resolves once its -32601 is out: everything before it is too. */
  async function linesUpToSentinel(): Promise<string[]> {
    peer.send({ jsonrpc: '2.0', id: 'sentinel', method: 'sentinel' });
    for (;;) {
      const lines = await peer.out.waitForLines(peer.out.lines.length + 1);
      if (lines.at(-1)!.includes('"id":"sentinel"')) return lines.slice(0, -1);
    }
  }

  describe('#id and #method', () => {
    it('carry the id exactly as the peer sent it and the method', async () => {
      const responder = await receive({ ...REQUEST, id: 'req-7' });
      expect([responder.id, responder.method]).to.deep.equal(['req-7', 'm']);
      responder.respond(null);
    });
  });

  describe('#respond()', () => {
    it('answers with the result', async () => {
      (await receive()).respond({ ok: [true] });
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":{"ok":[true]}}']);
    });

    it('answers null when the result is undefined', async () => {
      (await receive()).respond(undefined);
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":null}']);
    });

    it('sets hasResponded', async () => {
      const responder = await receive();
      expect(responder.hasResponded).to.equal(false);
      responder.respond(1);
      expect(responder.hasResponded).to.equal(true);
    });

    it('throws AlreadyAnsweredError on a second answer and sends no second line', async () => {
      const responder = await receive();
      responder.respond('first');
      expect(() => responder.respond('second'))
        .to.throw(AlreadyAnsweredError)
        .with.property('method', 'm');
      expect(() => responder.respondWithError(RpcError.internalError())).to.throw(AlreadyAnsweredError);
      expect(await linesUpToSentinel()).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":"first"}']);
    });

    it('throws SerializationError for an unserializable result, sends nothing and leaves the request open', async () => {
      const responder = await receive();
      expect(() => responder.respond({ n: 1n })).to.throw(SerializationError);
      expect(responder.hasResponded).to.equal(false);
      expect(await linesUpToSentinel()).to.deep.equal([]);
      responder.respond('second try');
      expect(await peer.out.next(1)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":"second try"}']);
    });
  });

  describe('#respondWithError()', () => {
    it('answers with exactly the code, message and data of an RpcError', async () => {
      (await receive()).respondWithError(new RpcError(-32050, 'Custom failure', { detail: [1, 'two'] }));
      expect(await peer.out.waitForLines(1)).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"Custom failure","data":{"detail":[1,"two"]}}}',
      ]);
    });

    it('answers with a wire error object as is, without data when it has none', async () => {
      (await receive()).respondWithError({ code: -32602, message: 'Invalid params' });
      expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}']);
    });
  });
});

describe('request handler results', () => {
  let peer: RawPeer;
  beforeEach(() => {
    peer = new RawPeer();
  });
  afterEach(() => peer.connection.close());

  /** Registers `handler` for `m`, sends one request and resolves with the first line answered. */
  async function answerOf(handler: (params: unknown, responder: Responder) => unknown): Promise<string> {
    peer.connection.onRequest('m', handler);
    peer.send(REQUEST);
    const [line] = await peer.out.waitForLines(1);
    return line!;
  }

  it('answers with the value the handler returns', async () => {
    expect(await answerOf(() => ({ value: 42 }))).to.equal('{"jsonrpc":"2.0","id":1,"result":{"value":42}}');
  });

  it('answers null when the handler returns null', async () => {
    expect(await answerOf(() => null)).to.equal('{"jsonrpc":"2.0","id":1,"result":null}');
  });

  it('answers with the value of the promise the handler returns', async () => {
    expect(await answerOf(async () => 'later')).to.equal('{"jsonrpc":"2.0","id":1,"result":"later"}');
  });

  it('answers with exactly the code, message and data of an RpcError the handler throws', async () => {
    const line = await answerOf(() => {
      throw new RpcError(-32001, 'Thrown', { at: 'handler' });
    });
    expect(line).to.equal('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Thrown","data":{"at":"handler"}}}');
  });

  it('answers with exactly the code and message of an RpcError the handler rejects with', async () => {
    const line = await answerOf(() => Promise.reject(new RpcError(-32002, 'Rejected')));
    expect(line).to.equal('{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Rejected"}}');
  });

  for (const [what, thrown] of [
    ['an Error', new TypeError('bad thing')],
    ['a string', 'just a string'],
    ['a plain object', { not: 'an error' }],
  ] as const) {
    it(`answers -32603 with a string data describing it when the handler throws ${what}`, async () => {
      const answer = JSON.parse(
        await answerOf(() => {
          throw thrown;
        }),
      ) as { id: unknown; error: { code: number; message: string; data: unknown } };
      expect(answer.id).to.equal(1);
      expect(answer.error).to.include({ code: -32603, message: 'Internal error' });
      expect(answer.error.data)
        .to.be.a('string')
        .and.include(thrown instanceof Error ? thrown.message : typeof thrown === 'string' ? thrown : 'an error');
    });
  }

  it('answers -32603 with a string data when the handler rejects with an Error', async () => {
    const answer = JSON.parse(await answerOf(() => Promise.reject(new Error('async failure')))) as {
      error: { code: number; data: unknown };
    };
    expect(answer.error.code).to.equal(-32603);
    expect(answer.error.data).to.be.a('string').and.include('async failure');
  });

  it('answers -32603 with a string data when the returned value cannot be serialized', async () => {
    const answer = JSON.parse(await answerOf(() => ({ n: 1n }))) as { error: { code: number; data: unknown } };
    expect(answer.error.code).to.equal(-32603);
    expect(answer.error.data).to.be.a('string');
  });

  it('sends nothing more when the handler answered through the responder and then returns a value', async () => {
    peer.connection.onRequest('m', (_params, responder) => {
      responder.respond('from responder');
      return 'from return';
    });
    peer.send(REQUEST, { jsonrpc: '2.0', id: 'sentinel', method: 'unknown' });
    const lines = await peer.out.waitForLines(2);
    await macrotasks();
    expect(peer.out.lines).to.deep.equal([lines[0], lines[1]]);
    expect(lines[0]).to.equal('{"jsonrpc":"2.0","id":1,"result":"from responder"}');
  });

  it('does not send an error the handler throws after it answered', async () => {
    const line = await answerOf((_params, responder) => {
      responder.respond('answered');
      throw new RpcError(-32000, 'too late');
    });
    peer.send({ jsonrpc: '2.0', id: 'sentinel', method: 'unknown' });
    await peer.out.waitForLines(2);
    expect(line).to.equal('{"jsonrpc":"2.0","id":1,"result":"answered"}');
    expect(JSON.parse(peer.out.lines[1]!)).to.include({ id: 'sentinel' });
  });

  it('logs an error the handler throws after it answered as a warning', async () => {
    const records: string[] = [];
    const logger = createStderrLogger({ level: 'warn', write: (text) => void records.push(text) });
    await peer.connection.close();
    peer = new RawPeer({ logger });
    await answerOf((_params, responder) => {
      responder.respond('answered');
      throw new Error('after the answer');
    });
    expect(records).to.have.length(1);
    expect(records[0]).to.match(/ warn .*`m`.*after the answer/);
  });

  it('does not send an error the handler rejects with after it answered', async () => {
    const line = await answerOf(async (_params, responder) => {
      responder.respond('answered');
      await Promise.resolve();
      throw new Error('too late');
    });
    await macrotasks();
    peer.send({ jsonrpc: '2.0', id: 'sentinel', method: 'unknown' });
    await peer.out.waitForLines(2);
    expect(line).to.equal('{"jsonrpc":"2.0","id":1,"result":"answered"}');
    expect(JSON.parse(peer.out.lines[1]!)).to.include({ id: 'sentinel' });
  });
});
