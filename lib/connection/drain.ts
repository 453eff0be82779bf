/**
 * Waiting for a connection's output to drain: the sender's side of backpressure.
 *
 * @packageDocumentation
 */
import { ConnectionClosedError, type CloseReason } from '../jsonrpc/errors';

/** Options of `Connection.drained()`. */
export interface DrainOptions {
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What {@link whenDrained} watches: a `Connection`. @internal */
export interface DrainEmitter {
  readonly writableNeedDrain: boolean;
  readonly closeReason: CloseReason | undefined;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  removeListener(event: 'drain' | 'close', listener: () => void): unknown;
}

/**
 * Resolves once `source`'s output can take more (at once if it can now).
 *
 * @throws (rejects) ConnectionClosedError if the connection is or becomes closed first; the
 * signal's reason if it is or becomes aborted first
 * @internal
 */
export function whenDrained(source: DrainEmitter, options: DrainOptions = {}): Promise<void> {
  const { signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (source.closeReason) return Promise.reject(new ConnectionClosedError(source.closeReason));
  if (!source.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      source.removeListener('drain', onDrain);
      source.removeListener('close', onClose);
      signal?.removeEventListener('abort', onAbort);
    };
    const onDrain = (): void => {
      stop();
      resolve();
    };
    const onClose = (): void => {
      stop();
      reject(new ConnectionClosedError(source.closeReason ?? 'closed locally'));
    };
    const onAbort = (): void => {
      stop();
      reject(signal!.reason);
    };
    source.once('drain', onDrain);
    source.once('close', onClose);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
