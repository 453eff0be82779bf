/**
 * How a resumable Streamable HTTP client notices a silent network: requests that hear nothing
 * from the server for a while are given up, so that they are resumed.
 *
 * @packageDocumentation
 */

/**
 * What the watch reads of a request: its socket (once it has one), whether the request has been
 * handed to the system entirely (`writableFinished`), and how to give it up.
 */
export interface WatchedRequest {
  readonly socket: { readonly bytesRead: number; readonly bytesWritten: number; readonly writableLength: number } | null;
  readonly writableFinished: boolean;
  destroy(error: Error): void;
}

/** The watch looks this many times per `silenceMs`. */
const LOOKS_PER_SILENCE = 4;

/**
 * Gives up each request that has heard nothing from the server for `silenceMs` (a silent
 * network): one interval timer for all of a connection's requests, instead of a socket timeout on
 * each (whose arming and re-arming on every read and write cost more than the request's own work
 * on small messages).
 *
 * @remarks A request is alive while its socket reads bytes from the server; while the request
 * itself is still being sent (a large body), also while the system takes more of it. Once sent
 * (an event stream's `GET` at once), only the server's bytes count: our own writes reaching the
 * kernel prove nothing about the server. Looks at the requests every quarter of `silenceMs`, so a
 * silent request is given up after `silenceMs` to 1.25 × `silenceMs` without a byte. A request
 * counts only once it has a socket, and only for that socket's bytes from when the watch first saw
 * them. The timer is unreferenced (it never keeps a process alive) and runs from
 * {@link SilenceWatch.start} to {@link SilenceWatch.stop}.
 * @internal
 */
export class SilenceWatch {
  readonly #silenceMs: number;
  readonly #requests: Iterable<WatchedRequest>;
  /** Per request: its socket's byte count when last looked at, and the looks since it moved. */
  readonly #seen = new WeakMap<WatchedRequest, { bytes: number; looks: number }>();
  #timer: NodeJS.Timeout | undefined;

  /** @param requests - the requests under way (a live collection: the watch reads it at each look) */
  constructor(silenceMs: number, requests: Iterable<WatchedRequest>) {
    this.#silenceMs = silenceMs;
    this.#requests = requests;
  }

  /** Starts looking (again after {@link SilenceWatch.stop}); nothing when already started. */
  start(): void {
    this.#timer ??= setInterval(() => this.#look(), this.#silenceMs / LOOKS_PER_SILENCE).unref();
  }

  /** Stops looking. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #look(): void {
    for (const request of this.#requests) {
      const socket = request.socket;
      if (socket === null) continue;
      // While the request is being sent, its bytes count once they leave the socket's own queue.
      const bytes = request.writableFinished ? socket.bytesRead : socket.bytesRead + socket.bytesWritten - socket.writableLength;
      const seen = this.#seen.get(request);
      if (seen === undefined || seen.bytes !== bytes) {
        this.#seen.set(request, { bytes, looks: 0 });
      } else if (++seen.looks >= LOOKS_PER_SILENCE) {
        request.destroy(new Error(`nothing received for ${this.#silenceMs} ms`));
      }
    }
  }
}
