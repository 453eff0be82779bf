/**
 * Weak tracking of responders and sent requests: the automatic answer for a dropped responder and
 * the automatic cancel for a dropped, unconsumed request. When an object is registered is decided
 * above, by the requests layer's drop scheduler (`lib/requests/drop-scheduler.ts`).
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

/** Ends the registration made by {@link registerForFinalization} for `target` (if any). @internal */
export function unregisterFromFinalization(target: DropTarget): void {
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
