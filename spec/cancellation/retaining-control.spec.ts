/**
 * request-cancellation.txt, section "Retaining Cancellation Control": one spec per sentence, in
 * memory, counting the exact `$/cancel_request` lines each side writes. GC cases create their
 * target inside a helper function, then `collectGarbage()`, with a positive control.
 */
import { expect } from 'chai';
import { ConnectionClosedError, RequestCancellationHandle, RpcError, type Connection, type SentRequest } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { useWorkPair } from '../helpers/cancellation';
import { collectGarbage } from '../helpers/events';
import { isCancelFor, sameId } from '../helpers/messages';
import { RawPeer, tappedPair } from '../helpers/peers';

/** Sends `work` and returns only a handle (the SentRequest is dropped unconsumed). */
function handleOfDropped(client: Connection): RequestCancellationHandle {
  return client.sendRequest('work').cancellationHandle();
}

/** Sends `work`, consumes it, and drops a handle taken from it; returns the consumer's promise. */
function consumeAndDropHandle(client: Connection): Promise<unknown> {
  const sent = client.sendRequest('work');
  sent.cancellationHandle();
  return sent.then((value) => value);
}

/** Sends `work` and drops the SentRequest unconsumed: the positive control of drop-cancel. */
function dropUnconsumed(client: Connection): void {
  client.sendRequest('work');
}

/** Sends `work`, keeping only a weak reference to the SentRequest and a strong one to a handle. */
function weaklyHeld(client: Connection): { ref: WeakRef<SentRequest>; handle: RequestCancellationHandle } {
  const sent = client.sendRequest('work');
  return { ref: new WeakRef(sent), handle: sent.cancellationHandle() };
}

describe('Request cancellation: Retaining Cancellation Control', () => {
  const work = useWorkPair();
  const { cancelsFor, received, barrier } = work;

  it('gives a RequestCancellationHandle from a PreparedRequest and from a SentRequest, every one cancelling the same request', async () => {
    const prepared = work.pair.left.prepareRequest('work');
    const early = prepared.cancellationHandle();
    const sent = prepared.send();
    const late = sent.cancellationHandle();
    expect(early).to.be.instanceOf(RequestCancellationHandle);
    expect(late).to.be.instanceOf(RequestCancellationHandle);
    expect(early.cancel()).to.equal(true);
    expect(late.cancel()).to.equal(false);
    await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
    work.held[0]!.respondCancelled();
    expect(await rejectionOf(sent)).to.be.instanceOf(RpcError);
    expect(cancelsFor(sent.id)).to.equal(1);
  });

  it('cancels independently of consumption: a callback attached before the cancel still receives the eventual result', async () => {
    const sent = work.pair.left.sendRequest<{ done: string }>('work');
    const result = sent.then((value) => value);
    const handle = sent.cancellationHandle();
    await received(1);
    expect(handle.cancel()).to.equal(true);
    await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
    work.held[0]!.respond({ done: 'despite the cancel' });
    expect(await result).to.deep.equal({ done: 'despite the cancel' });
  });

  it('shares once-only state with SentRequest.cancel(), forwarded cancellation and drop-cancel: one $/cancel_request in all', async () => {
    const upstream = new RawPeer();
    const calls: boolean[] = [];
    const upstreamCancelled = new Promise<RequestCancellationHandle>((resolve) => {
      upstream.connection.onRequest('proxied', (_params, responder) => {
        const sent = work.pair.left.sendRequest('work');
        sent.forwardCancellationFrom(responder);
        const handle = sent.cancellationHandle();
        calls.push(handle.cancel(), sent.cancel());
        responder.signal.addEventListener('abort', () => resolve(handle));
        // The SentRequest is dropped unconsumed here: drop-cancel is armed too.
      });
    });
    upstream.send({ jsonrpc: '2.0', id: 1, method: 'proxied' });
    upstream.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
    const handle = await upstreamCancelled;
    await collectGarbage();
    await barrier();
    expect([...calls, handle.cancel()]).to.deep.equal([true, false, false]);
    expect(cancelsFor(1)).to.equal(1);
    work.held[0]!.respondCancelled();
    await upstream.close();
  });

  it("cancels over the original request's connection with that request's id", async () => {
    const other = tappedPair();
    other.right.onRequest('work', () => new Promise(() => {}));
    const first = work.pair.left.sendRequest('work');
    const second = work.pair.left.sendRequest('work');
    const elsewhere = other.left.sendRequest('work');
    await received(2);
    expect(second.cancellationHandle().cancel()).to.equal(true);
    const line = await work.pair.fromLeft.findMessage(isCancelFor());
    expect(work.pair.fromLeft.lineOf(line)).to.equal(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${second.id}}}`);
    await barrier();
    expect(sameId(elsewhere.id, first.id)).to.equal(true);
    expect(other.fromLeft.matching(isCancelFor()).length).to.equal(0);
    expect(cancelsFor(first.id)).to.equal(0);
    for (const responder of work.held) responder.respond(null);
    await Promise.all([first, second]);
    elsewhere.detach();
    await other.close();
  });

  it('sends no cancellation when a handle is dropped', async () => {
    const consumed = consumeAndDropHandle(work.pair.left);
    dropUnconsumed(work.pair.left);
    await received(2);
    await collectGarbage();
    await work.pair.fromLeft.findMessage(isCancelFor(2));
    await barrier();
    expect(cancelsFor(1)).to.equal(0);
    work.held[0]!.respond('kept running');
    expect(await consumed).to.equal('kept running');
    work.held[1]!.respondCancelled();
  });

  it('keeps drop-cancel armed when a handle is retained: dropping the SentRequest still sends one cancel', async () => {
    const handle = handleOfDropped(work.pair.left);
    await received(1);
    await collectGarbage();
    await work.pair.fromLeft.findMessage(isCancelFor(1));
    expect(handle.cancel()).to.equal(false);
    await barrier();
    expect(cancelsFor(1)).to.equal(1);
    work.held[0]!.respondCancelled();
  });

  it('leaves cancelling an abandoned caller to its own guard: giving up on the answer sends nothing, the guard’s cancel() does', async () => {
    const sent = work.pair.left.sendRequest('work');
    const handle = sent.cancellationHandle();
    const abandon = new AbortController();
    const gaveUp = new Promise<string>((resolve) => abandon.signal.addEventListener('abort', () => resolve('abandoned')));
    const caller = Promise.race([sent.then(() => 'answered'), gaveUp]);
    await received(1);
    abandon.abort();
    expect(await caller).to.equal('abandoned');
    await barrier();
    expect(cancelsFor(sent.id)).to.equal(0);
    const errors: unknown[] = [];
    {
      using guard = {
        [Symbol.dispose]: () => {
          try {
            handle.cancel();
          } catch (error) {
            errors.push(error);
          }
        },
      };
      void guard;
    }
    await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
    expect(errors).to.deep.equal([]);
    work.held[0]!.respondCancelled();
  });

  it('does nothing, and remembers nothing, when a handle cancels before the prepared request is published', async () => {
    const prepared = work.pair.left.prepareRequest('work');
    const handle = prepared.cancellationHandle();
    expect(handle.cancel()).to.equal(false);
    const sent = prepared.send();
    await received(1);
    await barrier();
    expect(work.held[0]!.isCancelled).to.equal(false);
    work.held[0]!.respond('ran to completion');
    expect(await sent).to.equal('ran to completion');
    expect(cancelsFor(sent.id)).to.equal(0);
  });

  it('does nothing for a cancel racing publication (run while send() serializes); one after send() returns cancels', async () => {
    const prepared = work.pair.left.prepareRequest('work', { toJSON: () => ({ raced: racing.handle?.cancel() }) });
    const racing: { handle?: RequestCancellationHandle } = { handle: prepared.cancellationHandle() };
    const sent = prepared.send();
    const request = await work.pair.fromLeft.findMessage((m) => m.method === 'work');
    expect(request.params).to.deep.equal({ raced: false });
    expect(racing.handle!.cancel()).to.equal(true);
    await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
    work.held[0]!.respondCancelled();
    await rejectionOf(sent);
  });

  it('makes new cancellation calls do nothing once the response is routed, even before the result is consumed', async () => {
    const sent = work.pair.left.sendRequest('work');
    const handle = sent.cancellationHandle();
    await received(1);
    work.held[0]!.respond('answered');
    await work.pair.fromRight.response(sent.id);
    await barrier();
    expect(sent.isSettled).to.equal(true);
    expect([handle.cancel(), sent.cancel()]).to.deep.equal([false, false]);
    await barrier();
    expect(cancelsFor(sent.id)).to.equal(0);
    expect(await sent).to.equal('answered');
  });

  it('makes new cancellation calls do nothing once the request has failed', async () => {
    const sent = work.pair.left.sendRequest('work');
    const handle = sent.cancellationHandle();
    const failure = rejectionOf(sent);
    await received(1);
    await work.pair.left.close();
    expect(await failure).to.be.instanceOf(ConnectionClosedError);
    expect([handle.cancel(), sent.cancel()]).to.deep.equal([false, false]);
    expect(cancelsFor(sent.id)).to.equal(0);
  });

  describe('an attempt begun before settlement', () => {
    let raw: RawPeer;
    beforeEach(() => {
      raw = new RawPeer();
    });
    afterEach(async () => {
      await raw.close();
    });

    it('may still enqueue its $/cancel_request after the response was routed', async () => {
      const sent = raw.connection.sendRequest('work');
      const request = await raw.out.findMessage((m) => m.method === 'work');
      expect(sent.cancellationHandle().cancel()).to.equal(true);
      raw.send({ jsonrpc: '2.0', id: request.id, result: 'won the race' });
      // The response was routed synchronously; the cancel line is still queued for this turn.
      expect(sent.isSettled).to.equal(true);
      expect(raw.out.matching(isCancelFor()).length).to.equal(0);
      const cancel = await raw.out.findMessage(isCancelFor(request.id));
      expect(raw.out.lineOf(cancel)).to.equal(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${request.id}}}`);
      expect(await sent).to.equal('won the race');
    });
  });

  it('keeps a retained handle working after detach(): detach neither settles the request nor revokes the handle', async () => {
    const sent = work.pair.left.sendRequest('work');
    const handle = sent.cancellationHandle();
    sent.detach();
    expect(sent.isSettled).to.equal(false);
    await received(1);
    expect(handle.cancel()).to.equal(true);
    await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
    expect(work.held[0]!.isCancelled).to.equal(true);
    work.held[0]!.respondCancelled();
  });

  it('lets a retained handle cancel a detached request only while it remains pending', async () => {
    const first = work.pair.left.sendRequest('work');
    const second = work.pair.left.sendRequest('work');
    const [pending, answered] = [first.cancellationHandle(), second.cancellationHandle()];
    first.detach();
    second.detach();
    await received(2);
    work.held[1]!.respond('answered before the cancel');
    await work.pair.fromRight.response(second.id);
    expect(answered.cancel()).to.equal(false);
    expect(pending.cancel()).to.equal(true);
    await work.pair.fromLeft.findMessage(isCancelFor(first.id));
    await barrier();
    expect(cancelsFor(second.id)).to.equal(0);
    work.held[0]!.respondCancelled();
  });

  it('returns true from cancel() when the cancel was enqueued, not when the peer stopped: the peer may keep working', async () => {
    const sent = work.pair.left.sendRequest('work');
    await received(1);
    expect(sent.cancellationHandle().cancel()).to.equal(true);
    await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
    expect(work.held[0]!.isCancelled).to.equal(true);
    work.held[0]!.respond({ stopped: false });
    expect(await sent).to.deep.equal({ stopped: false });
  });

  it('does not guarantee a successful response: a cooperating peer answers -32800 and the request rejects', async () => {
    const sent = work.pair.left.sendRequest('work');
    await received(1);
    sent.cancellationHandle().cancel();
    await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
    work.held[0]!.respondCancelled();
    const error = await rejectionOf(sent);
    expect(error).to.be.instanceOf(RpcError).and.include({ code: -32800, message: 'Request cancelled' });
  });

  it('does not keep the connection open: it closes, the request fails, and the handle then does nothing', async () => {
    const sent = work.pair.left.sendRequest('work');
    const handle = sent.cancellationHandle();
    const failure = rejectionOf(sent);
    await received(1);
    void work.pair.right.close();
    expect(await failure).to.be.instanceOf(ConnectionClosedError);
    expect(work.pair.left.isClosed).to.equal(true);
    expect(handle.cancel()).to.equal(false);
  });

  it('does not keep the response consumer (the SentRequest) reachable', async () => {
    const { ref, handle } = weaklyHeld(work.pair.left);
    await received(1);
    await collectGarbage();
    expect(ref.deref()).to.equal(undefined);
    expect(handle).to.be.instanceOf(RequestCancellationHandle);
    work.held[0]!.respondCancelled();
  });
});
