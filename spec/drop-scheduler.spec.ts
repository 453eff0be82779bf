/**
 * The drop scheduler's one rule: an object is registered for finalization only after the code that
 * got it has had its chance to consume it, and is held strongly until then. Fake requests stand in
 * for InboundRequest and OutboundRequest; collections are forced (`--expose-gc`).
 */
import { expect } from 'chai';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import {
  scheduleResponderDrop,
  scheduleSentRequestDrop,
  sendingJobsReturned,
  unscheduleDrop,
  type DropCandidate,
} from '../lib/requests/drop-scheduler';
import { collectGarbage } from './helpers/events';

/** A request that records being registered and being dropped. */
class FakeRequest implements DropCandidate {
  isDropCancellable = true;
  registrations = 0;
  drops = 0;

  markRegisteredForDrop(): void {
    this.registrations++;
  }

  dropped(): void {
    this.drops++;
  }
}

/** Collects until `request` is reported dropped, or gives up after `rounds` collections. */
async function collectUntilDropped(request: FakeRequest, rounds = 5): Promise<void> {
  for (let i = 0; i < rounds && request.drops === 0; i++) await collectGarbage();
}

/** Schedules a responder that nothing else references (created here, then forgotten). */
function scheduleForgottenResponder(request: FakeRequest): void {
  scheduleResponderDrop({ responder: true }, request);
}

/** Schedules a SentRequest that nothing else references. */
function scheduleForgottenSentRequest(request: FakeRequest): void {
  scheduleSentRequestDrop({ sent: true }, request);
}

describe('drop scheduler: scheduleResponderDrop()', () => {
  it('holds a responder dropped in the scheduling job until it is registered: a collection then reports it dropped', async () => {
    const request = new FakeRequest();
    scheduleForgottenResponder(request);
    (globalThis as { gc?: () => void }).gc!();
    await collectUntilDropped(request);
    expect(request.drops).to.equal(1);
  });

  it('reports nothing for a responder unscheduled within the turn', async () => {
    const request = new FakeRequest();
    scheduleForgottenResponder(request);
    unscheduleDrop(request);
    await collectUntilDropped(request, 2);
    expect(request.drops).to.equal(0);
  });

  it('reports nothing for a responder unscheduled after the turn, once registered', async () => {
    const request = new FakeRequest();
    scheduleForgottenResponder(request);
    await nextMacrotask();
    unscheduleDrop(request);
    await collectUntilDropped(request, 2);
    expect(request.drops).to.equal(0);
  });
});

describe('drop scheduler: scheduleSentRequestDrop()', () => {
  afterEach(() => sendingJobsReturned());

  it('registers nothing before sendingJobsReturned(), however many turns pass', async () => {
    const request = new FakeRequest();
    scheduleForgottenSentRequest(request);
    await nextMacrotask();
    await nextMacrotask();
    expect(request.registrations).to.equal(0);
  });

  it('registers a still-cancellable request in a microtask after sendingJobsReturned(), not during it', async () => {
    const request = new FakeRequest();
    scheduleForgottenSentRequest(request);
    sendingJobsReturned();
    expect(request.registrations, 'during the call').to.equal(0);
    await null;
    expect(request.registrations, 'one microtask later').to.equal(1);
  });

  it('looks after the then() jobs the sending job queued, even after its flush: a request awaited at once is never registered', async () => {
    const request = new FakeRequest();
    scheduleForgottenSentRequest(request);
    // The writer queues its flush with the request's line, before `await sent` queues its then() job.
    queueMicrotask(sendingJobsReturned);
    void Promise.resolve().then(() => {
      request.isDropCancellable = false;
    });
    await nextMacrotask();
    expect(request.registrations).to.equal(0);
  });

  it('reports a registered request dropped after a collection, and nothing once it is unscheduled', async () => {
    const dropped = new FakeRequest();
    const answered = new FakeRequest();
    scheduleForgottenSentRequest(dropped);
    scheduleForgottenSentRequest(answered);
    sendingJobsReturned();
    await null;
    unscheduleDrop(answered);
    await collectUntilDropped(dropped);
    expect([dropped.drops, answered.drops]).to.deep.equal([1, 0]);
  });
});
