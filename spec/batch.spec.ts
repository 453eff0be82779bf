/**
 * JSON-RPC 2.0 batches on a connection that accepts them (`batches: true`, what ACP v2 negotiates),
 * and the one `-32600` of a connection that does not.
 */
import { expect } from 'chai';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { BATCH_SLICE_ENTRIES } from '../lib/connection/batch';
import { deferred } from './helpers/async';
import { RawPeer } from './helpers/peers';

const request = (id: unknown, method: string, params?: unknown): object =>
  params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
const notification = (method: string): object => ({ jsonrpc: '2.0', method });

/** The entries of an answer line that is a JSON array, sorted by their id's text (the order is free). */
function answersOf(line: string): Record<string, unknown>[] {
  const value = JSON.parse(line) as unknown;
  expect(value, line).to.be.an('array');
  return (value as Record<string, unknown>[]).sort((a, b) => JSON.stringify(a.id).localeCompare(JSON.stringify(b.id)));
}

describe('JSON-RPC 2.0 batches', () => {
  let peer: RawPeer;
  beforeEach(() => {
    peer = new RawPeer({ batches: true });
    peer.connection.onRequest('echo', (params: unknown) => params);
  });
  afterEach(() => peer.close());

  it('answers an empty batch with one -32600 whose id is null, not with an array', async () => {
    peer.send('[]');
    expect(await peer.linesBeforeProbe()).to.deep.equal([
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"an empty batch"}}',
    ]);
  });

  it('answers a batch of requests with one array holding every answer', async () => {
    peer.send([request(1, 'echo', ['a']), request('two', 'echo', { b: 2 })]);
    const lines = await peer.linesBeforeProbe();
    expect(lines).to.have.length(1);
    expect(answersOf(lines[0]!)).to.deep.equal([
      { jsonrpc: '2.0', id: 'two', result: { b: 2 } },
      { jsonrpc: '2.0', id: 1, result: ['a'] },
    ]);
  });

  it('sends nothing for a batch of notifications, and delivers each of them', async () => {
    const seen: unknown[] = [];
    peer.connection.onNotification('note', (params) => void seen.push(params));
    peer.send([
      { jsonrpc: '2.0', method: 'note', params: [1] },
      { jsonrpc: '2.0', method: 'note', params: [2] },
    ]);
    expect(await peer.linesBeforeProbe()).to.deep.equal([]);
    expect(seen).to.deep.equal([[1], [2]]);
  });

  it('answers each entry that is not a message with its own -32600 in one array', async () => {
    peer.send('[17,true,null]');
    const lines = await peer.linesBeforeProbe();
    expect(lines).to.have.length(1);
    const refusal =
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"a message must be a JSON object"}}';
    expect(lines[0]).to.equal(`[${refusal},${refusal},${refusal}]`);
  });

  it('answers the requests and invalid entries of a mixed batch, and nothing for its notification', async () => {
    peer.send([request(1, 'echo', [1]), notification('note'), [request(2, 'echo')], request(3, 'no/such'), { jsonrpc: '1.0', id: 4 }]);
    const [line, ...rest] = await peer.linesBeforeProbe();
    expect(rest).to.deep.equal([]);
    expect(answersOf(line!)).to.deep.equal([
      { jsonrpc: '2.0', id: 1, result: [1] },
      { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'Method not found', data: 'no/such' } },
      { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'Invalid Request', data: '"jsonrpc" must be "2.0"' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request', data: 'a batch entry must be a JSON object' } },
    ]);
  });

  it("echoes each entry's numeric id as it was written", async () => {
    peer.send(
      '[{"jsonrpc":"2.0","id":1.50,"method":"echo","params":[]},{"jsonrpc":"2.0","id":9007199254740993,"method":"echo","params":[]}]',
    );
    const [line] = await peer.linesBeforeProbe();
    expect(line).to.include('"id":1.50,').and.to.include('"id":9007199254740993,');
  });

  it('sends the array once the last request of the batch is answered', async () => {
    const slow = deferred<string>();
    peer.connection.onRequest('slow', () => slow.promise);
    peer.send([request(1, 'slow'), request(2, 'echo', [2])]);
    expect(await peer.linesBeforeProbe()).to.deep.equal([]);
    slow.resolve('done');
    const [line] = await peer.out.takeLines(1);
    expect(answersOf(line!)).to.deep.equal([
      { jsonrpc: '2.0', id: 1, result: 'done' },
      { jsonrpc: '2.0', id: 2, result: [2] },
    ]);
  });

  it('lets $/cancel_request cancel one request of a batch: its -32800 is in the array', async () => {
    peer.connection.onRequest(
      'wait',
      (_params, responder) =>
        new Promise<undefined>((resolve) =>
          responder.signal.addEventListener('abort', () => {
            responder.respondCancelled();
            resolve(undefined);
          }),
        ),
    );
    peer.send([request('w', 'wait'), request('e', 'echo', [1])]);
    peer.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'w' } });
    const [line] = await peer.out.takeLines(1);
    expect(answersOf(line!)).to.deep.equal([
      { jsonrpc: '2.0', id: 'e', result: [1] },
      { jsonrpc: '2.0', id: 'w', error: { code: -32800, message: 'Request cancelled' } },
    ]);
  });

  it('routes the responses of a batch to the requests they answer', async () => {
    const first = peer.connection.sendRequest('ask');
    const second = peer.connection.sendRequest('ask');
    await peer.out.takeLines(2);
    peer.send([
      { jsonrpc: '2.0', id: 2, result: 'second' },
      { jsonrpc: '2.0', id: 1, result: 'first' },
    ]);
    expect(await Promise.all([first, second])).to.deep.equal(['first', 'second']);
    expect(await peer.linesBeforeProbe()).to.deep.equal([]);
  });

  it('gives other work a turn between slices of a large batch, and keeps later messages after it', async () => {
    const size = BATCH_SLICE_ENTRIES * 3;
    const order: string[] = [];
    let seen = 0;
    peer.connection.onNotification('count', () => {
      if (seen++ === 0) setImmediate(() => order.push(`other work after ${seen} entries`));
    });
    peer.connection.onRequest('later', () => {
      order.push(`later message after ${seen} entries`);
      return 'ok';
    });
    peer.send(Array.from({ length: size }, () => notification('count')));
    peer.send(request('l', 'later'));
    await peer.out.takeLines(1);
    expect(order).to.deep.equal([`other work after ${BATCH_SLICE_ENTRIES} entries`, `later message after ${size} entries`]);
  });

  it('writes nothing for a batch whose connection closed while it was dispatched', async () => {
    const size = BATCH_SLICE_ENTRIES * 2;
    let seen = 0;
    peer.connection.onRequest('count', () => {
      if (++seen === 1) void peer.connection.close();
      return seen;
    });
    peer.send(Array.from({ length: size }, (_, i) => request(i, 'count')));
    await nextMacrotask();
    await nextMacrotask();
    expect(seen).to.equal(1);
    expect(peer.out.lines).to.deep.equal([]);
  });

  it('refuses a batch line over the line limit as a whole, then reads the next line', async () => {
    const small = new RawPeer({ batches: true, maxLineBytes: 256 });
    try {
      small.connection.onRequest('echo', (params: unknown) => params);
      small.send(Array.from({ length: 20 }, (_, i) => request(i, 'echo', ['x'])));
      expect(await small.linesBeforeProbe()).to.deep.equal([]);
      small.send(request('after', 'echo', [1]));
      expect(await small.out.takeLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":"after","result":[1]}']);
    } finally {
      await small.close();
    }
  });
});

describe('a connection that does not accept batches (the default, and ACP v1)', () => {
  it('answers a batch with one -32600 whose id is null, and dispatches none of its entries', async () => {
    const peer = new RawPeer();
    try {
      let called = 0;
      peer.connection.onRequest('echo', () => ++called);
      peer.send([request(1, 'echo'), request(2, 'echo')]);
      expect(await peer.linesBeforeProbe()).to.deep.equal([
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"batches are not supported"}}',
      ]);
      expect(called).to.equal(0);
    } finally {
      await peer.close();
    }
  });
});
