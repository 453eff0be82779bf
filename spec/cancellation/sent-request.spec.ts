/**
 * The sending side of cancellation: SentRequest, PreparedRequest, drop-cancel and the
 * once-only `$/cancel_request`. In memory, counting the exact lines the client writes.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { RpcError, type Connection, type RequestCancellationHandle, type Responder, type SentRequest } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { useWorkPair } from '../helpers/cancellation';
import { collectGarbage } from '../helpers/events';
import { isCancelFor } from '../helpers/messages';
import { RawPeer, tappedPair, type TappedPair } from '../helpers/peers';

/** Sends `work` and lets go of it unconsumed. */
function dropUnconsumed(client: Connection): void {
  client.sendRequest('work');
}

/** Sends `work`, attaches a callback (consuming it) and lets go of the SentRequest itself. */
function awaitAndDrop(client: Connection): Promise<unknown> {
  return client.sendRequest('work').then((value) => value);
}

/** Sends `work` and returns a way to drop it later plus its handle. */
function sendHeld(client: Connection, options = {}): { holder: { sent?: SentRequest }; handle: RequestCancellationHandle } {
  const sent = client.sendRequest('work', undefined, options);
  return { holder: { sent }, handle: sent.cancellationHandle() };
}

describe('SentRequest', () => {
  const work = useWorkPair();
  const { cancelsFor, received, barrier } = work;

  describe('awaiting', () => {
    it('resolves with the result of the answer', async () => {
      const sent = work.pair.left.sendRequest('work', { a: 1 });
      await received(1);
      work.held[0]!.respond({ ok: [1, 2] });
      expect(await sent).to.deep.equal({ ok: [1, 2] });
    });

    it("rejects with an RpcError carrying the error answer's code, message and data", async () => {
      const sent = work.pair.left.sendRequest('work');
      await received(1);
      work.held[0]!.respondWithError({ code: -32042, message: 'nope', data: { why: 'test' } });
      const error = await rejectionOf(sent);
      expect(error).to.be.instanceOf(RpcError);
      expect((error as RpcError).toJSON()).to.deep.equal({ code: -32042, message: 'nope', data: { why: 'test' } });
    });
  });

  describe('#cancel()', () => {
    it('writes exactly one $/cancel_request for its id, and the data answer is still delivered', async () => {
      const sent = work.pair.left.sendRequest<string>('work');
      await received(1);
      sent.cancel();
      sent.cancel();
      const line = await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
      expect(work.pair.fromLeft.lineOf(line)).to.equal(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${sent.id}}}`);
      work.held[0]!.respond('finished anyway');
      expect(await sent).to.equal('finished anyway');
      expect(cancelsFor(sent.id)).to.equal(1);
    });

    it('delivers a -32800 answer as a rejection with RpcError -32800', async () => {
      const sent = work.pair.left.sendRequest('work');
      await received(1);
      sent.cancel();
      await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
      work.held[0]!.respondCancelled();
      expect(await rejectionOf(sent))
        .to.be.instanceOf(RpcError)
        .and.include({ code: -32800 });
    });

    it('returns true only for the call that enqueued the cancel', async () => {
      const sent = work.pair.left.sendRequest('work');
      const other = work.pair.left.sendRequest('work');
      await received(2);
      expect([sent.cancel(), sent.cancel(), sent.cancellationHandle().cancel()]).to.deep.equal([true, false, false]);
      work.held[1]!.respond(null);
      await other;
      expect(other.cancel()).to.equal(false);
      work.held[0]!.respondCancelled();
      await rejectionOf(sent);
    });
  });

  describe('dropping it (garbage collection)', () => {
    it('sends exactly one $/cancel_request when an unconsumed SentRequest is dropped', async () => {
      dropUnconsumed(work.pair.left);
      await received(1);
      await collectGarbage();
      await work.pair.fromLeft.findMessage(isCancelFor(1));
      await collectGarbage();
      await barrier();
      expect(cancelsFor(1)).to.equal(1);
      expect(work.held[0]!.isCancelled).to.equal(true);
      work.held[0]!.respondCancelled();
    });

    it('sends no cancel when the response was routed before the drop', async () => {
      dropUnconsumed(work.pair.left);
      dropUnconsumed(work.pair.left);
      await received(2);
      work.held[0]!.respond('routed first');
      await work.pair.fromRight.response(1);
      await collectGarbage();
      // The control, request 2, was still pending: it is cancelled.
      await work.pair.fromLeft.findMessage(isCancelFor(2));
      await barrier();
      expect(cancelsFor(1)).to.equal(0);
      work.held[1]!.respondCancelled();
    });

    it('sends exactly one $/cancel_request when the SentRequest is dropped and a collection runs in the job that sent it', async () => {
      // The registration waits for the sender's chance to await; until then the request is held
      // strongly, so this collection cannot lose it: a later one cancels it.
      dropUnconsumed(work.pair.left);
      (globalThis as { gc?: () => void }).gc!();
      await received(1);
      await collectGarbage();
      await work.pair.fromLeft.findMessage(isCancelFor(1));
      await collectGarbage();
      await barrier();
      expect(cancelsFor(1)).to.equal(1);
      work.held[0]!.respondCancelled();
    });

    it('sends no cancel when a SentRequest first awaited in a later turn is collected while still pending', async () => {
      const later = sendHeld(work.pair.left);
      dropUnconsumed(work.pair.left);
      await received(2);
      const awaited = later.holder.sent!.then((value) => value);
      delete later.holder.sent;
      await collectGarbage();
      // The control, request 2, was never consumed: it is cancelled.
      await work.pair.fromLeft.findMessage(isCancelFor(2));
      await barrier();
      expect(cancelsFor(1)).to.equal(0);
      work.held[0]!.respond('awaited late');
      expect(await awaited).to.equal('awaited late');
      work.held[1]!.respondCancelled();
    });

    it('sends no cancel when an awaited SentRequest is collected while still pending', async () => {
      const awaited = awaitAndDrop(work.pair.left);
      dropUnconsumed(work.pair.left);
      await received(2);
      await collectGarbage();
      await work.pair.fromLeft.findMessage(isCancelFor(2));
      await barrier();
      expect(cancelsFor(1)).to.equal(0);
      work.held[0]!.respond('still awaited');
      expect(await awaited).to.equal('still awaited');
      work.held[1]!.respondCancelled();
    });
  });

  describe('#forwardResponseTo()', () => {
    it('re-issues an upstream cancel downstream exactly once, with the downstream id, and forwards the answer back', async () => {
      const upstream = new RawPeer();
      await work.pair.left.sendRequest('echo', [0]); // makes the downstream id differ from the upstream one
      upstream.connection.onRequest('proxied', (_params, responder) => {
        work.pair.left.sendRequest('work').forwardResponseTo(responder);
      });
      upstream.send({ jsonrpc: '2.0', id: 'up-1', method: 'proxied' });
      await received(1);
      for (let i = 0; i < 3; i++) upstream.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'up-1' } });
      await work.pair.fromLeft.findMessage(isCancelFor(2));
      await barrier();
      expect(work.pair.fromLeft.matching(isCancelFor()).length).to.equal(1);
      work.held[0]!.respondCancelled();
      const answer = await upstream.out.response('up-1');
      expect(upstream.out.lineOf(answer)).to.equal('{"jsonrpc":"2.0","id":"up-1","error":{"code":-32800,"message":"Request cancelled"}}');
      await upstream.close();
    });
  });

  describe('#forwardCancellationFrom()', () => {
    it('cancels at once, and once, when given an AbortSignal that is already aborted', async () => {
      const sent = work.pair.left.sendRequest('work');
      sent.forwardCancellationFrom(AbortSignal.abort());
      expect(sent.cancel()).to.equal(false);
      await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
      await received(1);
      work.held[0]!.respondCancelled();
      await rejectionOf(sent);
      expect(cancelsFor(sent.id)).to.equal(1);
    });
  });

  describe('at most one $/cancel_request per request', () => {
    type Step = 'cancel' | 'handle' | 'abort' | 'forward' | 'drop' | 'settle';
    const steps: Step[] = ['cancel', 'handle', 'abort', 'forward', 'drop', 'settle'];

    it('sends at most one, and exactly one iff asked before settlement, whatever mix of cancel(), handles, signal, forwarded cancel and drop', async () => {
      await fc.assert(
        fc.asyncProperty(fc.shuffledSubarray(steps), async (order) => {
          const run = tappedPair();
          const upstream = new RawPeer();
          try {
            const outcome = await runMix(run, upstream, order);
            const settleAt = order.indexOf('settle');
            const askedWhilePending = order.some((step, i) => step !== 'settle' && (settleAt === -1 || i < settleAt));
            expect(outcome.lines).to.equal(askedWhilePending ? 1 : 0);
            expect(outcome.trues).to.be.at.most(1);
          } finally {
            await Promise.all([run.close(), upstream.close()]);
          }
        }),
        { numRuns: 30, seed: 20_260_003 },
      );
    });
  });
});

describe('Connection#prepareRequest()', () => {
  it('sends nothing until send(), then publishes once; a second send() throws', async () => {
    const pair = tappedPair();
    pair.right.onRequest('work', () => 'done');
    const prepared = pair.left.prepareRequest('work', { n: 1 });
    await pair.left.sendRequest('work');
    expect(pair.fromLeft.matching((m) => m.method === 'work').length).to.equal(1);
    const sent = prepared.send();
    expect(await sent).to.equal('done');
    expect(() => prepared.send()).to.throw(Error, 'already sent');
    expect(pair.fromLeft.matching((m) => m.method === 'work').length).to.equal(2);
    await pair.close();
  });
});

/** Runs one mix of cancellation triggers against one request; returns the cancel lines and `true` returns. */
async function runMix(run: TappedPair, upstream: RawPeer, order: readonly string[]): Promise<{ lines: number; trues: number }> {
  const held: Responder[] = [];
  const upHeld: Responder[] = [];
  run.right.onRequest('work', (_params, responder) => void held.push(responder));
  run.right.onRequest('echo', (params) => params);
  upstream.connection.onRequest('up', (_params, responder) => void upHeld.push(responder));
  upstream.send({ jsonrpc: '2.0', id: 1, method: 'up' });
  const controller = new AbortController();
  const { holder, handle } = sendHeld(run.left, { signal: controller.signal });
  holder.sent!.forwardCancellationFrom(upHeld[0]!);
  await run.fromLeft.findMessage((m) => m.method === 'work');
  const results: boolean[] = [];
  for (const step of order) {
    if (step === 'cancel') results.push((holder.sent ?? handle).cancel());
    else if (step === 'handle') results.push(handle.cancel());
    else if (step === 'abort') controller.abort();
    else if (step === 'forward') upstream.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
    else if (step === 'drop') {
      delete holder.sent;
      await collectGarbage();
    } else {
      held[0]!.respond('settled');
      await run.fromRight.response(1);
    }
  }
  if (!order.includes('settle')) held[0]!.respondCancelled();
  await run.fromRight.response(1);
  // A drop-cancel can only come from the 'drop' step, which collected already.
  await run.left.sendRequest('echo', [1]);
  return { lines: run.fromLeft.matching(isCancelFor()).length, trues: results.filter(Boolean).length };
}
