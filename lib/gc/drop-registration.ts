/**
 * Drop-cancel registration deferred until the sender had its chance to consume the request: a
 * SentRequest awaited (or forwarded, detached, settled) right away is never registered.
 *
 * @packageDocumentation
 */
import { isFinalizationTracking } from './responder-tracker';

/** The request state a deferred registration looks at. @internal */
export interface DropCandidate {
  /** Whether dropping the SentRequest now would still send a cancel (pending, not consumed). */
  readonly isDropCancellable: boolean;
  /** Registers `sent` for finalization (only called while {@link DropCandidate.isDropCancellable}). */
  registerDrop(sent: object): void;
}

/** Requests sent by jobs that may still be running, as pairs: `[sent, request, sent, request, …]`. */
let fresh: (object | DropCandidate)[] = [];
const resolved = Promise.resolve();

/**
 * Registers `sent` for drop-cancel, unless it is consumed by the time a microtask queued after the
 * job that sent it runs. The connection calls {@link lookAfterSendingJobs} from its write flush.
 *
 * @remarks
 * Registering every SentRequest with the `FinalizationRegistry` and unregistering it when its
 * answer arrives cost 10–24% of a round trip (a registered object survives young-generation
 * collections, so awaited requests were promoted and collected by full collections). Yet a
 * request that is awaited at once can never be dropped unconsumed: `await sent` (like
 * `Promise.all`, `Promise.race` or returning it from an async function) calls `sent.then()` in a
 * microtask it queues synchronously, in the job that sent the request.
 *
 * So `sent` is held here, strongly, until a microtask queued after that `then()` job looks at it;
 * only a request still pending and unconsumed then is registered. That microtask is queued by the
 * connection's write flush, which already exists for every request sent: the flush is a microtask
 * that runs after the job that wrote the request's line has returned (it was queued during that
 * job or after it), so a microtask it queues runs after every `then()` job the sending job queued.
 * (A look queued by the send itself would run before that `then()` job and need a second pass:
 * two microtasks per request instead of one per flush.) The strong reference is what keeps
 * drop-cancel exact: a SentRequest dropped in the job that sent it cannot be collected before it
 * is registered (a collection in between finds it reachable from here); it is collected by a later
 * collection, which cancels it. Everything stays bounded: the look runs in the same microtask
 * checkpoint, before the event loop moves on.
 *
 * @internal
 */
export function registerUnlessConsumed(sent: object, request: DropCandidate): void {
  if (isFinalizationTracking()) fresh.push(sent, request);
}

/**
 * Queues the look at the requests sent so far. Only call it from a microtask that runs after the
 * jobs that sent them returned (a connection's write flush, queued by the request's own line).
 *
 * @internal
 */
export function lookAfterSendingJobs(): void {
  if (fresh.length === 0) return;
  const seen = fresh;
  fresh = [];
  // One look per batch: a batch moved by a later flush gets a look queued after its own then() jobs.
  void resolved.then(() => look(seen));
}

function look(seen: (object | DropCandidate)[]): void {
  for (let i = 0; i < seen.length; i += 2) {
    const request = seen[i + 1] as DropCandidate;
    if (request.isDropCancellable) request.registerDrop(seen[i]!);
  }
}
