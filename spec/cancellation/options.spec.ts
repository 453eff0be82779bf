/**
 * The `signal`, `timeout` and `timeoutGrace` options of `Connection#sendRequest()`.
 * In memory, counting the exact lines the client writes. Timer cleanup is checked with
 * `process.getActiveResourcesInfo()` (only ref'd timers keep a process alive, and only they count).
 */
import { expect } from 'chai';
import { RequestTimeoutError, RpcError } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { useWorkPair } from '../helpers/cancellation';
import { isCancelFor } from '../helpers/messages';

/** How many ref'd timers the process has. */
function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
}

describe('Connection#sendRequest() options', () => {
  const work = useWorkPair();
  const { cancelsFor, received, barrier } = work;

  describe('{ signal }', () => {
    it('cancels like cancel() when the signal aborts: one $/cancel_request, and the answer is still delivered', async () => {
      const controller = new AbortController();
      const sent = work.pair.left.sendRequest('work', undefined, { signal: controller.signal });
      await received(1);
      controller.abort();
      await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
      expect(work.held[0]!.isCancelled).to.equal(true);
      expect(sent.cancel()).to.equal(false);
      work.held[0]!.respond({ partial: true });
      expect(await sent).to.deep.equal({ partial: true });
      expect(cancelsFor(sent.id)).to.equal(1);
    });

    it("sends nothing for an already-aborted signal and rejects with the signal's reason", async () => {
      const reason = new Error('given up before sending');
      const sent = work.pair.left.sendRequest('work', undefined, { signal: AbortSignal.abort(reason) });
      expect(await rejectionOf(sent)).to.equal(reason);
      await barrier();
      expect(work.pair.fromLeft.matching((m) => m.method === 'work' || isCancelFor()(m)).length).to.equal(0);
    });

    it('sends nothing when the signal aborts after the request settled', async () => {
      const controller = new AbortController();
      const sent = work.pair.left.sendRequest('work', undefined, { signal: controller.signal });
      await received(1);
      work.held[0]!.respond('done');
      await sent;
      controller.abort();
      await barrier();
      expect(cancelsFor(sent.id)).to.equal(0);
    });
  });

  describe('{ timeout }', () => {
    it('cancels at the deadline, and an answer within the grace period settles the request', async () => {
      const sent = work.pair.left.sendRequest('work', undefined, { timeout: 1, timeoutGrace: 600_000 });
      await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
      await received(1);
      work.held[0]!.respondCancelled();
      const error = await rejectionOf(sent);
      expect(error).to.be.instanceOf(RpcError).and.include({ code: -32800 });
      expect(cancelsFor(sent.id)).to.equal(1);
    });

    it('sends no second cancel at the deadline when the request was already cancelled', async () => {
      const sent = work.pair.left.sendRequest('work', undefined, { timeout: 1, timeoutGrace: 600_000 });
      expect(sent.cancel()).to.equal(true);
      await received(1);
      const deadline = work.pair.left.sendRequest('work', undefined, { timeout: 1 });
      await work.pair.fromLeft.findMessage(isCancelFor(deadline.id));
      work.held[0]!.respondCancelled();
      work.held[1]!.respondCancelled();
      await Promise.all([rejectionOf(sent), rejectionOf(deadline)]);
      expect(cancelsFor(sent.id)).to.equal(1);
    });

    it('rejects with RequestTimeoutError naming the method once timeoutGrace passes without an answer', async () => {
      const sent = work.pair.left.sendRequest('work', undefined, { timeout: 1, timeoutGrace: 1 });
      const error = await rejectionOf(sent);
      expect(error).to.be.instanceOf(RequestTimeoutError).and.include({ method: 'work', timeout: 1, code: 'ACP_WIRE_REQUEST_TIMEOUT' });
      expect(cancelsFor(sent.id)).to.equal(1);
    });

    it('discards the late answer after a RequestTimeoutError harmlessly: no warning event, nothing left pending', async () => {
      const errors: unknown[] = [];
      work.pair.left.on('warning', (error) => errors.push(error));
      const sent = work.pair.left.sendRequest('work', undefined, { timeout: 1, timeoutGrace: 1 });
      expect(await rejectionOf(sent)).to.be.instanceOf(RequestTimeoutError);
      await received(1);
      work.held[0]!.respond('too late');
      await work.pair.fromRight.response(sent.id);
      await barrier();
      expect(errors).to.deep.equal([]);
      expect(work.pair.left.pendingCount).to.equal(0);
    });

    it('clears its timers when the request settles, so nothing keeps the process alive', async () => {
      await barrier(); // the baseline is taken once mocha's own timeout timer exists
      const before = activeTimers();
      const sent = work.pair.left.sendRequest('work', undefined, { timeout: 600_000, timeoutGrace: 600_000 });
      expect(activeTimers()).to.equal(before + 1);
      await received(1);
      work.held[0]!.respond('in time');
      await sent;
      expect(activeTimers()).to.equal(before);
    });

    it('clears its grace timer when the cancelled request is answered', async () => {
      const sent = work.pair.left.sendRequest('work', undefined, { timeout: 1, timeoutGrace: 600_000 });
      await work.pair.fromLeft.findMessage(isCancelFor(sent.id));
      await received(1);
      const before = activeTimers();
      work.held[0]!.respondCancelled();
      await rejectionOf(sent);
      expect(activeTimers()).to.equal(before - 1);
    });

    it('clears its timers when the connection closes first', async () => {
      await barrier();
      const before = activeTimers();
      const sent = work.pair.left.sendRequest('work', undefined, { timeout: 600_000 });
      const failure = rejectionOf(sent);
      await received(1);
      await work.pair.left.close();
      await failure;
      expect(activeTimers()).to.equal(before);
    });
  });
});
