/**
 * The conformance agent's timers: every wait of one agent state is cleared when its connection
 * closes, so the process can exit.
 *
 * @packageDocumentation
 */
import type { Responder } from '../../lib';

/** How a wait ended. */
export type Outcome = 'done' | 'cancelled';

/** Timers of one agent state, all cleared when its connection closes so the process can exit. */
export class Timers {
  readonly #live = new Set<NodeJS.Timeout>();
  #isClosed = false;

  /** Runs `fn` after `ms`; returns a function that stops it. */
  after(ms: number, fn: () => void): () => void {
    if (this.#isClosed) return noop;
    const timer = setTimeout(() => {
      this.#live.delete(timer);
      fn();
    }, ms);
    this.#live.add(timer);
    return () => {
      clearTimeout(timer);
      this.#live.delete(timer);
    };
  }

  /** Clears every timer; later ones never start. */
  clearAll(): void {
    this.#isClosed = true;
    for (const timer of this.#live) clearTimeout(timer);
    this.#live.clear();
  }

  /** Waits `ms`: `'done'`, or `'cancelled'` as soon as `signal` aborts. */
  delay(ms: number, signal: AbortSignal): Promise<Outcome> {
    if (signal.aborted) return Promise.resolve('cancelled');
    return new Promise((resolve) => {
      const onAbort = (): void => {
        stop();
        resolve('cancelled');
      };
      const stop = this.after(ms, () => {
        signal.removeEventListener('abort', onAbort);
        resolve('done');
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Waits `ms` for a request: `'done'`, or `'cancelled'` as soon as the peer cancels it (not when
   * the connection closes: nothing would be sent then).
   */
  delayUnlessCancelled(ms: number, responder: Responder): Promise<Outcome> {
    const signal = responder.signal;
    return new Promise((resolve) => {
      const finish = (outcome: Outcome): void => {
        stop();
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = (): void => {
        if (responder.isCancelled) finish('cancelled');
      };
      const stop = this.after(ms, () => finish('done'));
      signal.addEventListener('abort', onAbort);
    });
  }
}

/** Does nothing. */
export function noop(): void {}
