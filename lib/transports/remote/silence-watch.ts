/**
 * Gives up the HTTP requests of one client whose sockets stay silent (a dead network), with one
 * coarse timer for them all.
 *
 * @packageDocumentation
 */
import type { ClientRequest } from 'node:http';

/** What the last check saw of one request's socket. */
interface Seen {
  /** Bytes read and written on its socket (-1: not looked at yet). */
  bytes: number;
  /** Checks in a row that saw no byte move. */
  silentChecks: number;
}

/**
 * Destroys each watched request whose socket moves no byte (either way) for `silenceMs`.
 *
 * @remarks One timer, run every `silenceMs / 2` while some request is watched, compares each
 * request's socket byte count with the previous check's: a request is destroyed (with an `Error`
 * saying so) at the second check in a row that saw nothing move, so after between `silenceMs` and
 * 1.5 × `silenceMs` of silence. A socket timeout per request would do the same to the
 * millisecond, but re-arms a timer on every read and write of every request. The timer is unref'd
 * and stops once nothing is watched, or at {@link SilenceWatch.stop}.
 * @internal
 */
export class SilenceWatch {
  readonly #silenceMs: number;
  readonly #requests = new Map<ClientRequest, Seen>();
  #timer: NodeJS.Timeout | undefined;

  /** @param silenceMs - a positive number of milliseconds */
  constructor(silenceMs: number) {
    this.#silenceMs = silenceMs;
  }

  /** Watches `request` until it closes. */
  watch(request: ClientRequest): void {
    this.#requests.set(request, { bytes: -1, silentChecks: 0 });
    request.once('close', () => this.#requests.delete(request));
    this.#timer ??= setInterval(() => this.#check(), Math.max(1, this.#silenceMs / 2)).unref();
  }

  /** Stops the timer (the requests are the caller's to destroy). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#requests.clear();
  }

  #check(): void {
    if (this.#requests.size === 0) return this.stop();
    for (const [request, seen] of this.#requests) {
      const socket = request.socket;
      const bytes = socket ? socket.bytesRead + socket.bytesWritten : 0;
      if (bytes !== seen.bytes) {
        seen.bytes = bytes;
        seen.silentChecks = 0;
      } else if (++seen.silentChecks >= 2) {
        this.#requests.delete(request);
        request.destroy(new Error(`nothing received for ${this.#silenceMs} ms`));
      }
    }
  }
}
