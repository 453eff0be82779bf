/**
 * Weak tracking of responders and sent requests: the automatic answer for a dropped responder and
 * the automatic cancel for a dropped, unconsumed request.
 *
 * @packageDocumentation
 */

/** Something that reacts when the object tracked for it is collected. @internal */
export interface DropTarget {
  /** Called at most once, after the tracked object was garbage-collected. */
  dropped(): void;
}

const registry = new FinalizationRegistry<DropTarget>((target) => target.dropped());

/** Benchmark-only switch (`ACP_WIRE_BENCH_NO_TRACKER=1`): skip registration to measure the tracker's cost. */
const isTracking = process.env.ACP_WIRE_BENCH_NO_TRACKER !== '1';

/**
 * Calls `target.dropped()` once `object` has become unreachable and been collected, unless
 * {@link untrackDrop} ended the tracking first.
 *
 * @remarks
 * Finalization is best-effort: V8 runs the callback some time after a collection that found the
 * object unreachable, in a later macrotask. It may never run if no collection happens (an idle
 * process) or if the process exits first. The idle collector bounds the first case for responders;
 * `responder[Symbol.dispose]()` is the deterministic path. `target` must not reference `object`,
 * or the object can never be collected. Until the tracking ends, the registry holds `target` (and
 * all it references) strongly: end it as soon as a drop can no longer do anything.
 *
 * @internal
 */
export function trackDrop(object: object, target: DropTarget): void {
  if (isTracking) registry.register(object, target, target);
}

/** Ends the tracking started by {@link trackDrop} for `target` (if any). @internal */
export function untrackDrop(target: DropTarget): void {
  if (isTracking) registry.unregister(target);
}
