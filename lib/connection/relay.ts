/**
 * Backpressure across a hop: a connection whose messages are forwarded to another connection stops
 * reading while that one's output is full.
 *
 * @packageDocumentation
 */
import type { Connection } from './connection';
import { holdInputWhileFull } from './connection-hooks';
import { toDisposable, type Disposable } from '../support/disposable';

/**
 * Makes `from` hold what it reads while `to`'s output needs drain, as it already does while its own
 * output needs drain: memory stays bounded end to end when `from`'s messages are forwarded to `to`.
 *
 * @remarks
 * While `to.writableNeedDrain` is true, `from` dispatches nothing: it keeps reading and holds
 * what it reads, in order, up to its backlog limit (16 MiB), then stops reading its input, so the
 * fast sender's own writes back up. It dispatches again on `to`'s `'drain'` (or when `to` closes).
 * Once `from`'s input has ended, what it holds is dispatched without waiting for `to` (nothing more
 * will be read). The `Conductor` pairs every hop this way in both directions. Pair the two
 * connections of a relay of your own (for example with {@link sendProxiedMessageTo}) in each
 * direction you forward.
 *
 * Does not close or pause `to`, and does nothing once `from` has closed.
 * @returns a disposable that ends the pairing (also ended when `from` closes)
 * @throws TypeError if `from` or `to` is not a Connection
 * @example
 * ```ts
 * upstream.onAnyRequest((params, responder) => sendProxiedMessageTo(downstream, params, responder));
 * relayBackpressure(upstream, downstream);
 * relayBackpressure(downstream, upstream); // if downstream's messages go upstream too
 * ```
 */
export function relayBackpressure(from: Connection, to: Connection): Disposable {
  for (const [name, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (!value || typeof value.drained !== 'function') throw new TypeError(`${name} must be a Connection`);
  }
  const undoHold = holdInputWhileFull(from, to);
  const dispose = (): void => {
    from.removeListener('close', dispose);
    undoHold();
  };
  from.once('close', dispose);
  return toDisposable(dispose);
}
