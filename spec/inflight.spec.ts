/**
 * A peer that reuses the id of a request still in flight: neither request
 * hides the other — both run, both are answered, a cancel for the id cancels both, and a close
 * aborts both.
 */
import { expect } from 'chai';
import type { Responder } from '../lib';
import { RawPeer } from './helpers/peers';

const CANCEL_7 = { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 7 } };
const CANCELLED_7 = '{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}}';

describe('Connection with a reused in-flight id', () => {
  let peer: RawPeer;
  const running: Responder[] = [];
  beforeEach(() => {
    peer = new RawPeer();
    running.length = 0;
    peer.connection.onRequest('wait', (_params, responder) => {
      running.push(responder);
      responder.signal.addEventListener('abort', () => {
        if (responder.isCancelled) responder.respondCancelled();
      });
    });
    peer.connection.onRequest('ping', () => 'pong');
  });
  afterEach(() => peer.connection.close());

  /** Sends two `wait` requests with id 7 and resolves once both handlers run. */
  async function twoRequestsWithId7(): Promise<void> {
    peer.send({ jsonrpc: '2.0', id: 7, method: 'wait', params: ['first'] }, { jsonrpc: '2.0', id: 7, method: 'wait', params: ['second'] });
    peer.send({ jsonrpc: '2.0', id: 'barrier', method: 'ping' });
    expect(await peer.out.waitForLines(1)).to.deep.equal(['{"jsonrpc":"2.0","id":"barrier","result":"pong"}']);
    expect(running).to.have.length(2);
  }

  it('runs both and counts both in inflightCount', async () => {
    await twoRequestsWithId7();
    expect(peer.connection.inflightCount).to.equal(2);
  });

  it('aborts the signal of every running handler when the connection closes', async () => {
    await twoRequestsWithId7();
    await peer.connection.close();
    expect(running.map((responder) => responder.signal.aborted)).to.deep.equal([true, true]);
  });

  it('cancels every request in flight with that id on one $/cancel_request: each is answered -32800 once', async () => {
    await twoRequestsWithId7();
    peer.send(CANCEL_7);
    expect(await peer.out.waitForLines(3)).to.deep.equal(['{"jsonrpc":"2.0","id":"barrier","result":"pong"}', CANCELLED_7, CANCELLED_7]);
    expect(running.map((responder) => responder.isCancelled)).to.deep.equal([true, true]);
    expect(peer.connection.inflightCount).to.equal(0);
  });

  it('keeps the other request in flight, and cancellable, once one of them is answered', async () => {
    await twoRequestsWithId7();
    running[0]!.respond('first done');
    expect(peer.connection.inflightCount).to.equal(1);
    peer.send(CANCEL_7);
    expect((await peer.out.waitForLines(3)).slice(1)).to.deep.equal(['{"jsonrpc":"2.0","id":7,"result":"first done"}', CANCELLED_7]);
    expect(running[1]!.isCancelled).to.equal(true);
  });
});
