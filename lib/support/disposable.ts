/**
 * The disposable that registrations return.
 *
 * @packageDocumentation
 */

/** Undoes a registration. Works with `using`; disposing twice does nothing. */
export interface Disposable {
  /** Undoes the registration. */
  dispose(): void;
  /** Same as {@link Disposable.dispose}, for `using`. */
  [Symbol.dispose](): void;
}

/** Wraps an undo function as a {@link Disposable} that runs it at most once. */
export function toDisposable(undo: () => void): Disposable {
  let done = false;
  const dispose = (): void => {
    if (done) return;
    done = true;
    undo();
  };
  return { dispose, [Symbol.dispose]: dispose };
}
