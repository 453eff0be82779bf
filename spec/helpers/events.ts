/** Test helpers: wait on events, never on sleeps. */
import type { Connection } from '../../lib';
import { setImmediate as nextMacrotask } from 'node:timers/promises';

/** Resolves with the arguments of the next `event` emitted by `emitter`. */
export function nextEvent<T extends unknown[] = unknown[]>(
  emitter: { once(event: string, listener: (...args: any[]) => void): unknown },
  event: string,
): Promise<T> {
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args as T)));
}

/**
 * Forces a full collection and lets finalizers run (needs --expose-gc, set in .mocharc.json).
 *
 * @remarks Yields a macrotask first: a `WeakRef` keeps its target alive until the end of the job
 * that created or dereferenced it, so collecting in that same job could never clear it.
 */
export async function collectGarbage(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  await nextMacrotask();
  gc();
  await nextMacrotask();
  await nextMacrotask();
}

/** Closes every connection given (for afterEach). */
export async function closeAll(...connections: Connection[]): Promise<void> {
  await Promise.all(connections.map((c) => c.close()));
}
