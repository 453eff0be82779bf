/**
 * The callers waiting for an outgoing request's answer: each `then()` call, completed as a promise
 * reaction would be, without a promise of the request's own.
 *
 * @packageDocumentation
 */

/** One `then()` call waiting for an answer: its callbacks and the promise it returned. @internal */
export interface AnswerWaiter {
  readonly onFulfilled: unknown;
  readonly onRejected: unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Waiters of one request: none, one (the usual `await`), or several. @internal */
export type AnswerWaiters = AnswerWaiter | AnswerWaiter[] | undefined;

const RESOLVED = Promise.resolve();

/**
 * The promise `then(onFulfilled, onRejected)` returns while the answer is awaited; `hold` keeps
 * its waiter until {@link completeWaiters}.
 *
 * @remarks
 * The request has no promise of its own: returning `promise.then(onFulfilled, onRejected)` from one
 * would hold two promises, their resolving functions and a reaction per awaiting caller while the
 * request is pending. Here the promise `then()` returns is the only one; its callbacks run in a
 * microtask once the answer is known, exactly as a reaction job runs them (a callback that is not
 * a function passes the outcome through; a value is adopted, a throw rejects). Nothing is created
 * for a request nobody awaits, so an unconsumed failure never becomes an unhandled rejection.
 *
 * @internal
 */
export function waitForAnswer(onFulfilled: unknown, onRejected: unknown, hold: (waiter: AnswerWaiter) => void): Promise<unknown> {
  return new Promise((resolve, reject) => hold({ onFulfilled, onRejected, resolve, reject }));
}

/** Adds `waiter` to `waiters`. @internal */
export function addWaiter(waiters: AnswerWaiters, waiter: AnswerWaiter): AnswerWaiters {
  if (waiters === undefined) return waiter;
  if (Array.isArray(waiters)) {
    waiters.push(waiter);
    return waiters;
  }
  return [waiters, waiter];
}

/** Completes every waiter with the outcome, each in its own microtask, in the order they came. @internal */
export function completeWaiters(waiters: AnswerWaiters, isFulfilled: boolean, outcome: unknown): void {
  if (waiters === undefined) return;
  if (!Array.isArray(waiters)) return complete(waiters, isFulfilled, outcome);
  for (const waiter of waiters) complete(waiter, isFulfilled, outcome);
}

function complete(waiter: AnswerWaiter, isFulfilled: boolean, outcome: unknown): void {
  void RESOLVED.then(() => run(waiter, isFulfilled, outcome));
}

function run(waiter: AnswerWaiter, isFulfilled: boolean, outcome: unknown): void {
  const callback = isFulfilled ? waiter.onFulfilled : waiter.onRejected;
  if (typeof callback !== 'function') {
    if (isFulfilled) waiter.resolve(outcome);
    else waiter.reject(outcome);
    return;
  }
  try {
    waiter.resolve((callback as (value: unknown) => unknown)(outcome));
  } catch (thrown) {
    waiter.reject(thrown);
  }
}
