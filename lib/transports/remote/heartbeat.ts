/**
 * The WebSocket heartbeat: pings on a timer and declares the peer gone when it shows no sign of
 * life within a timeout (a cable pulled, a VM paused: no FIN ever comes).
 *
 * @packageDocumentation
 */
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { checkPositiveInteger } from './limits';

/** The heartbeat of a WebSocket connection. */
export interface HeartbeatOptions {
  /** Time between pings in ms. Default 30,000. */
  intervalMs?: number;
  /** How long after a ping the peer may stay silent before it is presumed gone, in ms. Default 10,000. */
  timeoutMs?: number;
}

/** Default time between pings. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;
/** Default silence after a ping that ends the connection. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;

/** Validates the heartbeat option. @throws TypeError or RangeError naming the option */
export function checkHeartbeat(heartbeat: HeartbeatOptions | false | undefined): void {
  if (heartbeat === undefined || heartbeat === false) return;
  if (typeof heartbeat !== 'object' || heartbeat === null) throw new TypeError('heartbeat must be an object or false');
  checkPositiveInteger('heartbeat.intervalMs', heartbeat.intervalMs);
  checkPositiveInteger('heartbeat.timeoutMs', heartbeat.timeoutMs);
}

/**
 * Pings every `intervalMs`; after a ping, a peer that shows no sign of life for `timeoutMs` is
 * declared gone (`onTimeout`). A vanished peer is therefore detected within
 * `intervalMs + timeoutMs`. With a timeout longer than the interval, the pings sent while a
 * verdict is pending keep the peer hearing from us every interval; only the first is judged.
 *
 * @remarks
 * A sign of life is any byte received (a pong, a ping, a message, part of one) or any progress
 * of our own output into the kernel (the peer is acknowledging what we send). The second rule
 * keeps a peer that is busy reading a large backlog, with our ping queued behind it, from being
 * declared dead while it reads. The verdict waits until what arrived during a stall of this
 * process (a long synchronous task, a GC pause) has been read. Timers are unref'd: they never keep
 * a process alive on their own.
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
  #isAlive = true;
  #dispatchedAtPing = 0;

  constructor(ws: WebSocket, socket: Socket, options: HeartbeatOptions, onTimeout: (timeoutMs: number) => void) {
    this.#ws = ws;
    this.#socket = socket;
    this.#intervalMs = options.intervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
    this.#onTimeout = onTimeout;
    socket.on('data', this.#onAlive);
    this.#interval = setInterval(this.#ping, this.#intervalMs).unref();
  }

  /** Stops the timers and listeners. Idempotent. */
  stop(): void {
    clearInterval(this.#interval);
    clearTimeout(this.#deadline);
    this.#interval = this.#deadline = undefined;
    this.#socket.removeListener('data', this.#onAlive);
  }

  readonly #onAlive = (): void => {
    this.#isAlive = true;
  };

  /** Bytes our socket has handed to the kernel (written, less what is still buffered in user space). */
  #dispatched(): number {
    return this.#socket.bytesWritten - this.#socket.writableLength;
  }

  readonly #ping = (): void => {
    if (this.#ws.readyState !== this.#ws.OPEN) return;
    if (this.#deadline !== undefined) {
      // A verdict on an earlier ping is pending (a timeout longer than the interval): ping all the
      // same, so that a peer whose own pings wait behind a large message still hears from us every
      // interval, but the bytes of this ping are no sign of the peer's life.
      const before = this.#dispatched();
      this.#ws.ping();
      this.#dispatchedAtPing += this.#dispatched() - before;
      return;
    }
    this.#isAlive = false;
    this.#ws.ping();
    this.#dispatchedAtPing = this.#dispatched();
    this.#deadline = setTimeout(this.#check, this.#timeoutMs).unref();
  };

  readonly #check = (): void => {
    if (this.#interval === undefined || this.#isAliveSincePing()) return void (this.#deadline = undefined);
    // Not yet a verdict: after a stall of this process (a long task, a GC pause, a descheduled
    // process) the timers run before the I/O phase reads what arrived meanwhile. An immediate runs
    // after that phase, so a pong already waiting in the socket counts.
    setImmediate(this.#conclude);
  };

  readonly #conclude = (): void => {
    this.#deadline = undefined;
    if (this.#interval === undefined || this.#isAliveSincePing()) return;
    this.stop();
    this.#onTimeout(this.#timeoutMs);
  };

  #isAliveSincePing(): boolean {
    return this.#isAlive || this.#dispatched() > this.#dispatchedAtPing;
  }
}
