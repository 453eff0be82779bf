/**
 * Weak tracking of responders and sent requests: the automatic answer for a dropped responder and
 * the automatic cancel for a dropped, unconsumed request.
 *
 * @packageDocumentation
 */

/** Something that reacts when the object registered for it is collected. @internal */
export interface DropTarget {
  /** Called at most once, after the registered object was garbage-collected. */
  dropped(): void;
}

const registry = new FinalizationRegistry<DropTarget>((target) => target.dropped());

/** Off only in the benchmark, to measure what the registrations cost (see {@link setFinalizationTracking}). */
let isTracking = true;

/**
 * Calls `target.dropped()` once `object` has become unreachable and been collected, unless
 * {@link unregisterFromFinalization} ended the registration first.
 *
 * @remarks
 * Finalization is best-effort: V8 runs the callback some time after a collection that found the
 * object unreachable, in a later macrotask. It may never run if no collection happens (an idle
 * process) or if the process exits first. The idle collector bounds the first case for responders;
 * `responder[Symbol.dispose]()` is the deterministic path. `target` must not reference `object`,
 * or the object can never be collected. Until the registration ends, the registry holds `target`
 * (and all it references) strongly, from a global root: end it as soon as a drop can no longer do
 * anything — in particular when the connection closes, or everything `target` reaches (the
 * connection, its streams, a responder captured by an abort listener) stays alive for good.
 *
 * @internal
 */
export function registerForFinalization(object: object, target: DropTarget): void {
  if (isTracking) registry.register(object, target, target);
}

/** Registrations waiting for the end of the event-loop turn: target → object, held strongly. */
let waiting = new Map<DropTarget, object>();
let isWaitQueued = false;

/**
 * Like {@link registerForFinalization}, once the current event-loop turn is over (in a
 * `setImmediate`), unless {@link unregisterFromFinalization} ends it first; `object` is held
 * strongly until then, so a drop meanwhile is still seen, by a collection after the registration.
 *
 * @remarks
 * A registration and its end cost a `FinalizationRegistry` cell and its unregister-token entry,
 * and V8 keeps a registered object alive through young-generation collections, so a responder
 * and everything it reaches wait for a full collection even when the request is answered
 * microseconds later. A responder answered within the turn its handler returned in (in process, a
 * held request cancelled and answered at once: the bench's cancel cycle) is now never registered:
 * 2,100 registrations → 0 in 2,100 such cycles, 206,300 → 198,300 instructions and 2,098 → 2,023
 * L1 data misses per cycle (cachegrind). A drop is seen one turn later at most: finalizers need a
 * macrotask after the collection anyway.
 *
 * @internal
 */
export function registerAtEndOfTurn(object: object, target: DropTarget): void {
  if (!isTracking) return;
  waiting.set(target, object);
  if (isWaitQueued) return;
  isWaitQueued = true;
  setImmediate(registerWaiting).unref();
}

function registerWaiting(): void {
  isWaitQueued = false;
  const batch = waiting;
  waiting = new Map();
  for (const [target, object] of batch) registry.register(object, target, target);
}

/** Ends the registration made by {@link registerForFinalization} or {@link registerAtEndOfTurn} for `target` (if any). @internal */
export function unregisterFromFinalization(target: DropTarget): void {
  if (waiting.delete(target)) return;
  if (isTracking) registry.unregister(target);
}

/** Whether registration is on (see {@link setFinalizationTracking}). @internal */
export function isFinalizationTracking(): boolean {
  return isTracking;
}

/**
 * Switches registration on or off for the whole process. Only the benchmark calls it (importing
 * this module by its path), to measure the cost of the trackers; it is not part of the package's
 * API, and switching it off means dropped responders are never answered and dropped requests
 * never cancelled.
 *
 * @internal
 */
export function setFinalizationTracking(enabled: boolean): void {
  isTracking = enabled;
}
