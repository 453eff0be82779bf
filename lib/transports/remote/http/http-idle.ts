/**
 * When a Streamable HTTP connection counts as abandoned: nothing holds it (no event stream open,
 * no POST in progress, no `initialize` awaiting its answer) for an idle limit.
 *
 * @packageDocumentation
 */

/** The default `httpIdleTimeoutMs` of a remote server: one minute. */
export const DEFAULT_HTTP_IDLE_TIMEOUT_MS = 60_000;

/**
 * Calls `onIdle` once nothing has held the watch for `timeoutMs`: each hold stops the clock, and
 * the release of the last one starts it again from zero. `0` watches nothing.
 *
 * @remarks The timer is unref'd (it never keeps a process alive) and cleared by
 * {@link IdleWatch.stop}. `onIdle` is called at most once.
 * @internal
 */
export class IdleWatch {
  readonly #timeoutMs: number;
  readonly #onIdle: () => void;
  #holds = 0;
  #timer: NodeJS.Timeout | undefined;
  #isStopped = false;

  /** Starts the clock at once: a connection nothing ever holds is idle `timeoutMs` after it opens. */
  constructor(timeoutMs: number, onIdle: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#onIdle = onIdle;
    this.#arm();
  }

  /** Holds the watch (stops the clock) until the returned function is called; calling it again does nothing. */
  hold(): () => void {
    this.#holds++;
    clearTimeout(this.#timer);
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      this.#holds--;
      this.#arm();
    };
  }

  /** Stops watching for good (the connection has ended). */
  stop(): void {
    this.#isStopped = true;
    clearTimeout(this.#timer);
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#holds > 0 || this.#isStopped || this.#timeoutMs === 0) return;
    this.#timer = setTimeout(() => {
      this.#isStopped = true;
      this.#onIdle();
    }, this.#timeoutMs).unref();
  }
}
