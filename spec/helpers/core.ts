/** Helpers for in-memory connection specs: raw peers, controllable streams, deferreds. */
import { PassThrough, Writable } from 'node:stream';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { Connection, type ConnectionOptions } from '../../lib';
import { LineCollector, writeLines } from './wire';

/** A {@link Connection} whose other end is raw streams: write lines in, read exact lines out. */
export interface RawPeer {
  readonly connection: Connection;
  /** What the connection reads: write raw lines here. */
  readonly input: PassThrough;
  /** What the connection writes. */
  readonly output: PassThrough;
  /** The connection's output lines. */
  readonly out: LineCollector;
  /** Writes each item as one line into the connection's input (strings as is, else JSON). */
  send(...items: unknown[]): void;
}

/** Creates a {@link RawPeer}; close it with `connection.close()`. */
export function rawPeer(options: ConnectionOptions = {}): RawPeer {
  const input = new PassThrough();
  const output = new PassThrough();
  const connection = new Connection(input, output, options);
  const out = new LineCollector(output, 'connection output');
  return { connection, input, output, out, send: (...items) => writeLines(input, ...items) };
}

/** A promise with its resolve function. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

/** Creates a {@link Deferred}. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** Lets `count` macrotasks run (for asserting that something did NOT happen meanwhile). */
export async function macrotasks(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await nextMacrotask();
}

/**
 * A Writable with a tiny buffer whose writes complete only when the test says so: `write()` returns
 * false at once, and `'drain'` follows {@link HeldWritable.release}.
 */
export class HeldWritable extends Writable {
  readonly chunks: string[] = [];
  #held: (() => void)[] = [];
  #isHolding = true;
  #onWrite: (() => void) | undefined;

  constructor() {
    super({ highWaterMark: 1 });
  }

  /** Number of writes waiting for {@link HeldWritable.release}. */
  get heldCount(): number {
    return this.#held.length;
  }

  /** Resolves at the next call of `_write` (at once if one is held already). */
  nextWrite(): Promise<void> {
    if (this.#held.length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onWrite = resolve;
    });
  }

  /** Completes every held write; with `holdMore: false`, later writes complete at once. */
  release(holdMore = true): void {
    this.#isHolding = holdMore;
    const held = this.#held;
    this.#held = [];
    for (const done of held) done();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    if (!this.#isHolding) return callback();
    this.#held.push(() => callback());
    const onWrite = this.#onWrite;
    this.#onWrite = undefined;
    onWrite?.();
  }
}
