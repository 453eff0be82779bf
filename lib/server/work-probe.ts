/**
 * Whether a client has work in flight, and when it has none: what a draining server waits for
 * before it closes the client.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { LineDecoder } from '../framing/ndjson';
import { hasWorkInFlight } from './bounds';

/** How often {@link connectionWorkProbe} looks at a busy connection again while someone waits. */
const CONNECTION_POLL_MS = 20;

/** A client's work in flight, as a draining {@link ClientPool} sees it. */
export interface WorkProbe {
  /** Whether a request is unanswered, either way. */
  readonly isBusy: boolean;
  /** Resolves once the client has nothing in flight (at once when it has nothing now). */
  whenIdle(): Promise<void>;
}

/**
 * The work in flight of a {@link Connection}: its unanswered requests, sent and received
 * (`pendingCount` and `inflightCount`).
 *
 * @remarks `whenIdle()` looks at a busy connection every 20 ms (a timer that does not keep the
 * process alive), and resolves when the connection closes.
 */
export function connectionWorkProbe(connection: Connection): WorkProbe {
  const isIdle = (): boolean => connection.closeReason !== undefined || !hasWorkInFlight(connection);
  return {
    get isBusy() {
      return !isIdle();
    },
    whenIdle() {
      return new Promise<void>((resolve) => {
        if (isIdle()) return resolve();
        const timer = setInterval(() => {
          if (!isIdle()) return;
          clearInterval(timer);
          resolve();
        }, CONNECTION_POLL_MS);
        timer.unref();
      });
    },
  };
}

/**
 * The work in flight of a byte stream of NDJSON lines relayed between a client and a peer that
 * this process does not parse itself (e.g. an agent process): it reads the lines each way and
 * counts the requests not answered yet.
 *
 * @remarks A request is a line with a `method` and an `id`; it is answered by a later line the
 * other way with the same `id` and no `method`. Lines that are not JSON-RPC are ignored. Feed it
 * the chunks as they pass ({@link LineWorkTracker.fromClient}, {@link LineWorkTracker.toClient}); it does
 * not read the streams itself. An ACP v2 turn whose `session/prompt` is answered before its
 * updates ends, for the tracker, with that answer.
 */
export class LineWorkTracker implements WorkProbe {
  /** Ids (as JSON text) of the client's requests the peer has not answered yet. */
  readonly #fromClient = new Set<string>();
  /** Ids of the peer's requests the client has not answered yet. */
  readonly #toClient = new Set<string>();
  readonly #clientLines: LineDecoder;
  readonly #peerLines: LineDecoder;
  #waiters: (() => void)[] = [];

  constructor() {
    this.#clientLines = new LineDecoder({ value: (message) => this.#see(message, this.#fromClient, this.#toClient), error: ignore });
    this.#peerLines = new LineDecoder({ value: (message) => this.#see(message, this.#toClient, this.#fromClient), error: ignore });
  }

  /** Whether a request is unanswered, either way. */
  get isBusy(): boolean {
    return this.#fromClient.size > 0 || this.#toClient.size > 0;
  }

  /** Reads a chunk the client sent. */
  fromClient(chunk: Buffer | string): void {
    this.#clientLines.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }

  /** Reads a chunk sent to the client. */
  toClient(chunk: Buffer | string): void {
    this.#peerLines.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }

  /** Resolves once nothing is in flight. */
  whenIdle(): Promise<void> {
    if (!this.isBusy) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** A message from one side: its request is now awaited from the other; its answer settles one of the other's. */
  #see(message: unknown, sent: Set<string>, received: Set<string>): void {
    if (typeof message !== 'object' || message === null || !('id' in message)) return;
    const id = JSON.stringify(message.id);
    if ('method' in message) return void sent.add(id);
    if (!received.delete(id) || this.isBusy) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}

function ignore(): void {}
