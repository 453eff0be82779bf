/**
 * The WebSocket heartbeat: pings on a timer and declares the peer gone when it shows no sign of
 * life within a timeout (a cable pulled, a VM paused: no FIN ever comes).
 *
 * @packageDocumentation
 */
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS, type HeartbeatOptions } from '../remote-connection';

/**
 * The most pings left unanswered before the heartbeat stops pinging until a pong comes: a peer
 * on `ws` answers every ping it receives and, with its default `maxPendingAutoPongs` of 60, ends
 * the connection when more than that many answers wait to be written (pings that queued behind a
 * large message on a slow link all arrive at once, while its own socket is busy sending).
 */
const MAX_UNANSWERED_PINGS = 30;

/**
 * Pings every `intervalMs`; after a ping, a peer that sends nothing for `timeoutMs` is declared
 * gone (`onTimeout`). A vanished peer is therefore detected within `intervalMs + timeoutMs`, also
 * while this side keeps sending. With a timeout longer than the interval, the pings sent while a
 * verdict is pending keep the peer hearing from us every interval; only the first is judged.
 *
 * @remarks
 * A sign of life is a byte received from the peer (a pong, a ping, a message, part of one), and
 * nothing else: our own writes reaching the kernel prove nothing (into a silent network they go on
 * until its buffers fill). A peer must therefore answer within `timeoutMs` even when our ping
 * waits behind what we sent before it, or send something meanwhile (a peer with its own heartbeat
 * pings every interval). No verdict is given while this side is not reading (its socket paused by
 * its own reader's backpressure: the peer's answer may be waiting unread), and the verdict waits
 * until what arrived during a stall of this process (a long synchronous task, a GC pause) has been
 * read. At most 30 pings wait for their pong at a time, so that a peer on `ws` never takes them for
 * a flood. Timers are unref'd: they never keep a process alive on their own.
 *
 * @internal
 */
export class Heartbeat {
  readonly #ws: WebSocket;
  readonly #socket: Socket;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #onTimeout: (timeoutMs: number) => void;
  #interval: NodeJS.Timeout | undefined;
  #deadline: NodeJS.Timeout | undefined;
  /** Whether the peer sent a byte since the ping being judged. */
  #isAlive = true;
  /** Pings sent since the last pong. */
  #unanswered = 0;

  constructor(ws: WebSocket, socket: Socket, options: HeartbeatOptions, onTimeout: (timeoutMs: number) => void) {
    this.#ws = ws;
    this.#socket = socket;
    this.#intervalMs = options.intervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
    this.#onTimeout = onTimeout;
    socket.on('data', this.#onAlive);
    ws.on('pong', this.#onPong);
    this.#interval = setInterval(this.#ping, this.#intervalMs).unref();
  }

  /** Stops the timers and listeners. Idempotent. */
  stop(): void {
    clearInterval(this.#interval);
    clearTimeout(this.#deadline);
    this.#interval = this.#deadline = undefined;
    this.#socket.removeListener('data', this.#onAlive);
    this.#ws.removeListener('pong', this.#onPong);
  }

  readonly #onAlive = (): void => {
    this.#isAlive = true;
  };

  readonly #onPong = (): void => {
    this.#unanswered = 0;
  };

  readonly #ping = (): void => {
    if (this.#ws.readyState !== this.#ws.OPEN) return;
    if (this.#unanswered < MAX_UNANSWERED_PINGS) {
      this.#unanswered++;
      this.#ws.ping();
    }
    // A verdict on an earlier ping is pending (a timeout longer than the interval): this ping only
    // lets a peer whose own pings wait behind a large message hear from us every interval.
    if (this.#deadline !== undefined) return;
    this.#isAlive = false;
    this.#deadline = setTimeout(this.#check, this.#timeoutMs).unref();
  };

  readonly #check = (): void => {
    // Alive, or not judged: the peer's answer may be waiting in a socket this side does not read.
    if (this.#interval === undefined || this.#isAlive || this.#socket.isPaused()) return void (this.#deadline = undefined);
    // Not yet a verdict: after a stall of this process (a long task, a GC pause, a descheduled
    // process) the timers run before the I/O phase reads what arrived meanwhile. An immediate runs
    // after that phase, so a pong already waiting in the socket counts.
    setImmediate(this.#conclude);
  };

  readonly #conclude = (): void => {
    this.#deadline = undefined;
    if (this.#interval === undefined || this.#isAlive || this.#socket.isPaused()) return;
    this.stop();
    this.#onTimeout(this.#timeoutMs);
  };
}
