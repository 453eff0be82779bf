/**
 * Receiving `$/cancel_request`: what the cancelled request's responder observes and the
 * exact lines the connection writes. In memory, over a Connection driven by raw lines.
 */
import { expect } from 'chai';
import { ConnectionClosedError, ErrorCode, RpcError, type NotificationMessage, type Responder } from '../../lib';
import { deferred } from '../helpers/async';
import { CANCELLED_ERROR, isResponse } from '../helpers/messages';
import { RawPeer } from '../helpers/peers';

/** Registers `method` with a handler that keeps its responder and hands it to the test. */
function holdRequests(peer: RawPeer, method: string): Responder[] {
  const held: Responder[] = [];
  peer.connection.onRequest(method, (_params, responder) => void held.push(responder));
  return held;
}

function cancelLine(requestId: unknown): object {
  return { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId } };
}

/** Waits until everything written before it has been processed and answered. */
async function barrier(peer: RawPeer, id: string): Promise<void> {
  peer.send({ jsonrpc: '2.0', id, method: '$/no-such-method' });
  await peer.out.response(id);
}

describe('Receiving $/cancel_request', () => {
  let peer: RawPeer;
  beforeEach(() => {
    peer = new RawPeer();
  });
  afterEach(async () => {
    await peer.close();
  });

  describe('marking the request cancelled', () => {
    it('marks the request cancelled before a user $/cancel_request handler sees the notification', async () => {
      const held = holdRequests(peer, 'work');
      const observed = deferred<boolean>();
      peer.connection.onNotification('$/cancel_request', () => observed.resolve(held[0]!.isCancelled));
      peer.send({ jsonrpc: '2.0', id: 1, method: 'work' });
      peer.send(cancelLine(1));
      expect(await observed.promise).to.equal(true);
      held[0]!.respondCancelled();
    });

    it('aborts responder.signal with an RpcError -32800 as its reason', async () => {
      const held = holdRequests(peer, 'work');
      const aborted = deferred<unknown>();
      peer.connection.onRequest('watch', (_params, responder) => {
        held.push(responder);
        responder.signal.addEventListener('abort', () => aborted.resolve(responder.signal.reason), { once: true });
      });
      peer.send({ jsonrpc: '2.0', id: 'w', method: 'watch' });
      peer.send(cancelLine('w'));
      const reason = await aborted.promise;
      expect(reason).to.be.instanceOf(RpcError).and.include({ code: ErrorCode.RequestCancelled });
      held[0]!.respondCancelled();
    });

    it("gives every peer cancel's signal the same frozen RpcError -32800 as its reason", async () => {
      const held = holdRequests(peer, 'work');
      peer.send({ jsonrpc: '2.0', id: 5, method: 'work' });
      peer.send({ jsonrpc: '2.0', id: 6, method: 'work' });
      peer.send(cancelLine(5));
      peer.send(cancelLine(6));
      await barrier(peer, 'b');
      const [first, second] = held.map((responder) => responder.signal.reason as RpcError);
      expect(first).to.be.instanceOf(RpcError).and.include({ code: ErrorCode.RequestCancelled });
      expect(second).to.equal(first);
      expect(Object.isFrozen(first)).to.equal(true);
      for (const responder of held) responder.respondCancelled();
    });

    it('returns an aborted responder.signal when it is first read after the cancel arrived', async () => {
      const held = holdRequests(peer, 'work');
      peer.send({ jsonrpc: '2.0', id: 3, method: 'work' });
      peer.send(cancelLine(3));
      await barrier(peer, 'b');
      const signal = held[0]!.signal;
      expect(signal.aborted).to.equal(true);
      expect(signal.reason).to.be.instanceOf(RpcError).and.include({ code: ErrorCode.RequestCancelled });
      held[0]!.respondCancelled();
    });

    it('returns an aborted responder.signal when it is first read after the connection closed', async () => {
      const held = holdRequests(peer, 'work');
      peer.send({ jsonrpc: '2.0', id: 4, method: 'work' });
      await barrier(peer, 'b');
      await peer.close();
      expect(held[0]!.signal.aborted).to.equal(true);
      expect(held[0]!.signal.reason).to.be.instanceOf(ConnectionClosedError);
    });

    it('matches the request id by JSON value and type: cancelling "1" leaves request 1 alone', async () => {
      const held = holdRequests(peer, 'work');
      peer.send({ jsonrpc: '2.0', id: 1, method: 'work' });
      peer.send(cancelLine('1'));
      await barrier(peer, 'b1');
      expect(held[0]!.isCancelled).to.equal(false);
      peer.send(cancelLine(1.0));
      await barrier(peer, 'b2');
      expect(held[0]!.isCancelled).to.equal(true);
      held[0]!.respond('done');
    });

    it('honours a $/cancel_request wrapped in a proxy/successor envelope the same way', async () => {
      const held = holdRequests(peer, 'work');
      peer.send({ jsonrpc: '2.0', id: 7, method: 'work' });
      peer.send({ jsonrpc: '2.0', method: 'proxy/successor', params: { method: '$/cancel_request', params: { requestId: 7 } } });
      await barrier(peer, 'b');
      expect(held[0]!.isCancelled).to.equal(true);
      expect(held[0]!.signal.aborted).to.equal(true);
      held[0]!.respondCancelled();
    });

    it('honours a $/cancel_request wrapped in the legacy _proxy/successor envelope', async () => {
      const held = holdRequests(peer, 'work');
      peer.send({ jsonrpc: '2.0', id: 8, method: 'work' });
      peer.send({ jsonrpc: '2.0', method: '_proxy/successor', params: { method: '$/cancel_request', params: { requestId: 8 } } });
      await barrier(peer, 'b');
      expect(held[0]!.isCancelled).to.equal(true);
      held[0]!.respondCancelled();
    });
  });

  describe('#respondCancelled()', () => {
    it('sends exactly {"code":-32800,"message":"Request cancelled"} for the request id', async () => {
      const held = holdRequests(peer, 'work');
      peer.send({ jsonrpc: '2.0', id: 'x-1', method: 'work' });
      peer.send(cancelLine('x-1'));
      await barrier(peer, 'b');
      held[0]!.respondCancelled();
      const answer = await peer.out.response('x-1');
      expect(peer.out.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"x-1","error":${CANCELLED_ERROR}}`);
    });
  });

  describe('user handlers', () => {
    it('delivers the raw $/cancel_request notification to a user handler registered for it', async () => {
      const seen = deferred<[unknown, NotificationMessage]>();
      peer.connection.onNotification('$/cancel_request', (params, message) => seen.resolve([params, message]));
      peer.send(cancelLine('unknown-id'));
      const [params, message] = await seen.promise;
      expect(params).to.deep.equal({ requestId: 'unknown-id' });
      expect(message).to.deep.equal({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'unknown-id' } });
    });

    it('delivers a malformed $/cancel_request to the user handler too, and still never answers it', async () => {
      const seen = deferred<unknown>();
      peer.connection.onAnyNotification((params) => seen.resolve(params));
      peer.send(cancelLine({ not: 'an id' }));
      expect(await seen.promise).to.deep.equal({ requestId: { not: 'an id' } });
      await barrier(peer, 'b');
      expect(peer.out.matching(isResponse).length).to.equal(1);
    });

    it('ignores an unhandled $/-prefixed notification without a reply', async () => {
      peer.send({ jsonrpc: '2.0', method: '$/progress', params: { token: 1 } });
      peer.send({ jsonrpc: '2.0', method: '$/setTrace', params: { value: 'off' } });
      await barrier(peer, 'b');
      expect(peer.out.lines).to.have.length(1);
    });
  });
});
