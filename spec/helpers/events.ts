/**
 * Events and leaks: await an event (never a sleep), collect a connection's non-fatal errors, force a
 * collection, and count what stays behind (listeners, handles, unhandled rejections).
 */
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { AcpWireError, Connection } from '../../lib';

/** Resolves with the arguments of the next `event` emitted by `emitter`. */
export function nextEvent<T extends unknown[] = unknown[]>(
  emitter: { once(event: string, listener: (...args: any[]) => void): unknown },
  event: string,
): Promise<T> {
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args as T)));
}

/** Every `'warning'` (a non-fatal error) `connection` emits from now on, in order. */
export function errorsOf(connection: Connection): AcpWireError[] {
  const errors: AcpWireError[] = [];
  connection.on('warning', (error) => errors.push(error));
  return errors;
}

/** Closes every connection given (for afterEach). */
export async function closeAll(...connections: Connection[]): Promise<void> {
  await Promise.all(connections.map((c) => c.close()));
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

/** The events a Connection listens to on its input and output streams. */
export const STREAM_EVENTS = ['data', 'end', 'close', 'error', 'drain', 'finish', 'readable'] as const;

/** The number of listeners per event name on an emitter, for the given names. */
export function listenerCounts(emitter: NodeJS.EventEmitter, events: readonly string[] = STREAM_EVENTS): Record<string, number> {
  return Object.fromEntries(events.map((event) => [event, emitter.listenerCount(event)]));
}

/** Counts of each kind of ref'd handle or request keeping the event loop alive (`process.getActiveResourcesInfo()`). */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

/** Records every unhandled rejection while installed. */
export class UnhandledRejections {
  readonly reasons: unknown[] = [];
  readonly #listener = (reason: unknown): void => void this.reasons.push(reason);

  /** Starts recording (call in `before`). */
  install(): void {
    process.on('unhandledRejection', this.#listener);
  }

  /** Stops recording (call in `after`). */
  uninstall(): void {
    process.removeListener('unhandledRejection', this.#listener);
  }
}
