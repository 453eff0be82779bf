/**
 * When a dropped responder or SentRequest starts to be watched by the finalization registry: the
 * one timing rule of the always-answered machinery, for both directions.
 *
 * @remarks
 * The rule, for both kinds of droppable object: **an object is registered for finalization only
 * after the code that got it has had its chance to consume it, and is held strongly from the moment
 * it is scheduled until then.** That chance is:
 *
 * - for a responder ({@link scheduleResponderDrop}), the rest of the event-loop turn in which its
 *   handler returned without answering: responders are registered together in one `setImmediate`
 *   per turn. A responder answered within that turn is never registered.
 * - for a SentRequest ({@link scheduleSentRequestDrop}), the job that sent it and the `then()` jobs
 *   that job queued (`await sent`, `Promise.all`, returning it from an async function): it is looked
 *   at in a microtask queued by {@link sendingJobsReturned}, which the connection calls from its
 *   write flush, a microtask that runs after the job that wrote the request's line has returned. It
 *   is registered only if still {@link DropCandidate.isDropCancellable} then, so a request awaited
 *   at once is never registered.
 *
 * Why: a registration costs a registry cell and keeps its object out of young-generation
 * collections, so objects that are consumed at once are never registered. Why it stays exact: the
 * strong reference held until registration means a drop in between is not missed; a collection
 * after the registration sees it. Both waits are bounded: the look runs in the same microtask
 * checkpoint as the flush, the responder registration one turn later (finalizers need a macrotask
 * after a collection anyway).
 *
 * Nothing is scheduled while finalization tracking is off (the benchmark's switch, see
 * `setFinalizationTracking`).
 *
 * @packageDocumentation
 */
import { isFinalizationTracking, registerForFinalization, unregisterFromFinalization, type DropTarget } from '../gc/responder-tracker';

/**
 * A request whose SentRequest may be dropped unconsumed: the scheduler asks it, once the sending
 * job is over, whether a drop would still do something. @internal
 */
export interface DropCandidate extends DropTarget {
  /** Whether dropping the SentRequest now would still send a cancel (pending, not consumed). */
  readonly isDropCancellable: boolean;
  /**
   * Told just before its SentRequest is registered: from now on it ends the registration with
   * {@link unscheduleDrop} once a drop can no longer do anything.
   */
  markRegisteredForDrop(): void;
}

/** Responders waiting for the end of the turn: request → responder, held strongly. */
let endOfTurn = new Map<DropTarget, object>();
let isEndOfTurnQueued = false;

/** SentRequests sent by jobs that may still be running, as pairs: `[sent, request, sent, request, …]`. */
let sentThisJob: (object | DropCandidate)[] = [];
const resolved = Promise.resolve();

/**
 * Schedules `responder` for registration at the end of this event-loop turn (the rule is in
 * this module's documentation); collecting it afterwards calls `request.dropped()`, unless
 * {@link unscheduleDrop} ends it first. `request` must not reference `responder`.
 *
 * @internal
 */
export function scheduleResponderDrop(responder: object, request: DropTarget): void {
  if (!isFinalizationTracking()) return;
  endOfTurn.set(request, responder);
  if (isEndOfTurnQueued) return;
  isEndOfTurnQueued = true;
  setImmediate(registerEndOfTurn).unref();
}

function registerEndOfTurn(): void {
  isEndOfTurnQueued = false;
  const batch = endOfTurn;
  endOfTurn = new Map();
  for (const [request, responder] of batch) registerForFinalization(responder, request);
}

/**
 * Schedules `sent` for registration once the job that sent it has returned, if `request` is still
 * drop-cancellable then (the rule is in this module's documentation); collecting it afterwards calls `request.dropped()`.
 *
 * @internal
 */
export function scheduleSentRequestDrop(sent: object, request: DropCandidate): void {
  if (isFinalizationTracking()) sentThisJob.push(sent, request);
}

/**
 * Queues the look at the SentRequests scheduled so far. Only call it from a microtask that runs
 * after the jobs that sent them returned: a connection's write flush, queued by the request's own
 * line.
 *
 * @internal
 */
export function sendingJobsReturned(): void {
  if (sentThisJob.length === 0) return;
  const seen = sentThisJob;
  sentThisJob = [];
  // One look per batch: a batch moved by a later flush gets a look queued after its own then() jobs.
  void resolved.then(() => look(seen));
}

function look(seen: (object | DropCandidate)[]): void {
  for (let i = 0; i < seen.length; i += 2) {
    const request = seen[i + 1] as DropCandidate;
    if (!request.isDropCancellable) continue;
    request.markRegisteredForDrop();
    registerForFinalization(seen[i]!, request);
  }
}

/**
 * Ends what was scheduled or registered for `request`: a drop no longer calls `request.dropped()`,
 * and the scheduler and the registry let go of it and its object.
 *
 * @internal
 */
export function unscheduleDrop(request: DropTarget): void {
  if (endOfTurn.delete(request)) return;
  unregisterFromFinalization(request);
}
