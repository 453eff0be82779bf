/** Promise tools for specs: a deferred, a rejection to inspect, a settle tracker, macrotask turns. */
import { setImmediate as nextMacrotask } from 'node:timers/promises';

/** A promise with its resolve function outside. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

/** Creates a {@link Deferred}. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/**
 * Resolves with the error a promise-like rejects with; fails if it resolves. `E` only names the
 * type the caller expects (nothing checks it: assert it, e.g. with `instanceOf`).
 */
export async function rejectionOf<E = unknown>(promise: PromiseLike<unknown>): Promise<E> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error as E;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}

/** The outcome of one request, recorded without ever leaving a rejection unhandled. */
export type Outcome = { status: 'resolved'; value: unknown } | { status: 'rejected'; reason: unknown } | { status: 'pending' };

/** Tracks a promise-like's outcome, readable synchronously (a promise's state is not). */
export function track(request: PromiseLike<unknown>): { readonly outcome: Outcome; readonly done: Promise<void> } {
  const state: { outcome: Outcome; done: Promise<void> } = { outcome: { status: 'pending' }, done: Promise.resolve() };
  state.done = Promise.resolve(request).then(
    (value) => void (state.outcome = { status: 'resolved', value }),
    (reason: unknown) => void (state.outcome = { status: 'rejected', reason }),
  );
  return state;
}

/** Lets `count` macrotasks run (for asserting that something did NOT happen meanwhile). */
export async function macrotasks(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await nextMacrotask();
}
