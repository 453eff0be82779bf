/**
 * In-memory ends of a connection: a raw peer (a Connection on one side, raw NDJSON on the other),
 * a tapped pair (two Connections whose lines can be read each way), and a writable whose writes
 * complete only when the test says so.
 */
import { PassThrough, Writable } from 'node:stream';
import { Connection, type ConnectionOptions } from '../../lib';
import { LineReader, writeLines } from './lines';
import { isResponseTo } from './messages';

/** A {@link Connection} whose other end is raw streams: tests write raw text in and read the exact lines it writes. */
export class RawPeer {
  /** The connection under test. */
  readonly connection: Connection;
  /** What the connection reads: the peer's side writes here. */
  readonly input = new PassThrough();
  /** What the connection writes. */
  readonly output = new PassThrough();
  /** The connection's output lines. */
  readonly out: LineReader;

  constructor(options: ConnectionOptions = {}) {
    this.out = new LineReader(this.output, { label: 'connection output' });
    this.connection = new Connection(this.input, this.output, options);
  }

  /** Writes each item as one line into the connection's input (a string as it is, anything else as JSON). */
  send(...items: unknown[]): void {
    writeLines(this.input, ...items);
  }

  /** Writes raw text or bytes into the connection's input, exactly as given (no newline added). */
  writeRaw(data: string | Uint8Array): void {
    this.input.write(data);
  }

  /**
   * Sends the request `{"id":"probe-N","method":"probe"}` (the connection must answer it, with a
   * handler or `-32601`) and takes every line written before its answer: proof that the connection
   * still reads, and exactly what the earlier input produced.
   */
  async linesBeforeProbe(n = 0): Promise<string[]> {
    const id = `probe-${n}`;
    this.send({ jsonrpc: '2.0', id, method: 'probe' });
    return (await this.out.takeUntil(isResponseTo(id))).slice(0, -1);
  }

  /** Closes the connection and ends its input. */
  async close(): Promise<void> {
    await this.connection.close();
    this.input.end();
  }
}

/** Two connections over in-memory streams, with the lines each one wrote readable. */
export interface TappedPair {
  readonly left: Connection;
  readonly right: Connection;
  /** Lines `left` wrote (what `right` reads). */
  readonly fromLeft: LineReader;
  /** Lines `right` wrote (what `left` reads). */
  readonly fromRight: LineReader;
  /** Writes a raw line to `right` as if `left` had sent it. */
  injectToRight(line: string): void;
  /** Closes both connections. */
  close(): Promise<void>;
}

/** Like `createConnectionPair()`, with a {@link LineReader} on each direction. */
export function tappedPair(leftOptions: ConnectionOptions = {}, rightOptions: ConnectionOptions = {}): TappedPair {
  const leftToRight = new PassThrough();
  const rightToLeft = new PassThrough();
  const fromLeft = new LineReader(leftToRight, { label: 'lines from left' });
  const fromRight = new LineReader(rightToLeft, { label: 'lines from right' });
  const left = new Connection(rightToLeft, leftToRight, leftOptions);
  const right = new Connection(leftToRight, rightToLeft, rightOptions);
  return {
    left,
    right,
    fromLeft,
    fromRight,
    injectToRight: (line) => void leftToRight.write(`${line}\n`),
    close: async () => void (await Promise.all([left.close(), right.close()])),
  };
}

/**
 * A Writable with a one-byte buffer whose writes complete only when the test says so: `write()`
 * returns false at once, and `'drain'` follows {@link HeldWritable.release}.
 */
export class HeldWritable extends Writable {
  /** Every chunk written, as text. */
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

  /** The complete lines written so far. */
  get lines(): string[] {
    return this.chunks.join('').split('\n').slice(0, -1);
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
