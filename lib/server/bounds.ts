/**
 * The checks and watchers behind a server's bounds: how many clients it serves at once, and how
 * long a client may stay silent with nothing in flight before it is disconnected.
 *
 * @packageDocumentation
 */
import type { Socket } from 'node:net';
import type { Connection } from '../connection/connection';

/** The largest delay `setTimeout` keeps (about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Checks a "how many at once" option: an integer of at least 1, or `Infinity`.
 *
 * @throws RangeError naming the option
 */
export function checkMaxCount(option: string, value: number): number {
  if (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1)) return value;
  throw new RangeError(`${option} must be an integer of at least 1, or Infinity, got ${String(value)}`);
}

/**
 * Checks an idle timeout: an integer number of milliseconds from 0 (no timeout) to 2^31 - 1.
 *
 * @throws RangeError naming the option
 */
export function checkIdleTimeout(option: string, value: number): number {
  if (Number.isInteger(value) && value >= 0 && value <= MAX_TIMEOUT_MS) return value;
  throw new RangeError(`${option} must be an integer number of milliseconds from 0 (none) to ${MAX_TIMEOUT_MS}, got ${String(value)}`);
}

/** `host:port` of the peer of a socket, for logs. */
export function peerOf(socket: Socket): string {
  return `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
}

/** Whether a connection has work in flight: a request it sent or one it received is unanswered. */
export function hasWorkInFlight(connection: Connection): boolean {
  return connection.pendingCount > 0 || connection.inflightCount > 0;
}

/**
 * Calls `onIdle` once `socket` has carried no byte in either direction for `timeoutMs` while
 * `isBusy()` is false. A busy socket is looked at again `timeoutMs` later. `0` watches nothing.
 *
 * @remarks Uses the socket's own inactivity timer (`socket.setTimeout`), which does not keep the
 * process alive and is cleared when the socket is destroyed. The event loop runs its timers before
 * it reads the sockets: after the process was busy for longer than `timeoutMs`, the timer comes
 * due while the peer's bytes (a request) wait unread in the kernel. So the decision is taken after
 * the reads of that turn of the loop (`setImmediate`): bytes read by then, or work they started,
 * keep the socket.
 */
export function watchIdle(socket: Socket, timeoutMs: number, isBusy: () => boolean, onIdle: () => void): void {
  if (timeoutMs === 0) return;
  socket.setTimeout(timeoutMs);
  socket.on('timeout', () => {
    const bytesRead = socket.bytesRead;
    setImmediate(() => {
      if (socket.destroyed) return;
      if (socket.bytesRead !== bytesRead || isBusy()) return void socket.setTimeout(timeoutMs);
      socket.setTimeout(0);
      onIdle();
    });
  });
}
