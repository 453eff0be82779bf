/**
 * How a resumable Streamable HTTP client notices a silent network: requests whose sockets move no
 * byte for a while are given up, so that they are resumed.
 *
 * @packageDocumentation
 */

/** What the watch reads of a request: its socket (once it has one), and how to give it up. */
export interface WatchedRequest {
  readonly socket: { readonly bytesRead: number; readonly bytesWritten: number; readonly writableLength: number } | null;
  destroy(error: Error): void;
}

/** The watch looks this many times per `silenceMs`. */
const LOOKS_PER_SILENCE = 4;

/**
 * Gives up each request whose socket has read nothing and handed nothing more to the system to
 * send for `silenceMs` (a silent network): one interval timer for all of a connection's requests, instead of a socket timeout on
 * each (whose arming and re-arming on every read and write cost more than the request's own work
 * on small messages).
 *
 * @remarks Looks at the requests every quarter of `silenceMs`, so a silent request is given up
 * after `silenceMs` to 1.25 × `silenceMs` without a byte. A request counts only once it has a
 * socket, and only for that socket's bytes from when the watch first saw them. The timer is
 * unreferenced (it never keeps a process alive) and runs from {@link SilenceWatch.start} to
 * {@link SilenceWatch.stop}.
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
      // Bytes still queued in the socket count once they go to the system (as a socket timeout's writes do).
      const bytes = socket.bytesRead + socket.bytesWritten - socket.writableLength;
      const seen = this.#seen.get(request);
      if (seen === undefined || seen.bytes !== bytes) {
        this.#seen.set(request, { bytes, looks: 0 });
      } else if (++seen.looks >= LOOKS_PER_SILENCE) {
        request.destroy(new Error(`nothing received for ${this.#silenceMs} ms`));
      }
    }
  }
}
