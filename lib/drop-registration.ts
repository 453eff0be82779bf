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

/** Requests not looked at yet, as pairs: `[sent, request, sent, request, …]`. */
let fresh: (object | DropCandidate)[] = [];
/** Requests unconsumed at their first look, registered at their second unless consumed since. */
let second: (object | DropCandidate)[] = [];
let isScheduled = false;
const resolved = Promise.resolve();

/**
 * Registers `sent` for drop-cancel, unless it is consumed within two microtask passes.
 *
 * @remarks
 * Registering every SentRequest with the `FinalizationRegistry` and unregistering it when its
 * answer arrives cost 10–24% of a round trip (a registered object survives young-generation
 * collections, so awaited requests were promoted and collected by full collections). Yet a
 * request that is awaited at once can never be dropped unconsumed: `await sent` (like
 * `Promise.all`, `Promise.race` or returning it from an async function) calls `sent.then()` in a
 * microtask it queues synchronously, in the job that sent the request.
 *
 * So `sent` is held here, strongly, and looked at twice: first in a microtask queued after the
 * job that sent it (the `then()` job of an immediate `await` is queued before the second look),
 * then in the microtask pass after that. Only a request still pending and unconsumed at its second
 * look is registered. The strong reference is what keeps drop-cancel exact: a SentRequest dropped
 * in the job that sent it cannot be collected before it is registered (a collection in between
 * finds it reachable from here); it is collected by a later collection, which cancels it.
 * Everything stays bounded: the looks run in the same microtask checkpoint, before the event loop
 * moves on.
 *
 * @internal
 */
export function registerUnlessConsumed(sent: object, request: DropCandidate): void {
  if (!isFinalizationTracking()) return;
  fresh.push(sent, request);
  if (!isScheduled) {
    isScheduled = true;
    void resolved.then(look);
  }
}

function look(): void {
  const due = second;
  second = [];
  for (let i = 0; i < due.length; i += 2) {
    const request = due[i + 1] as DropCandidate;
    if (request.isDropCancellable) request.registerDrop(due[i]!);
  }
  const seen = fresh;
  fresh = [];
  for (let i = 0; i < seen.length; i += 2) {
    if ((seen[i + 1] as DropCandidate).isDropCancellable) second.push(seen[i]!, seen[i + 1]!);
  }
  if (second.length > 0) void resolved.then(look);
  else isScheduled = false;
}
