/**
 * A Connection whose other end is raw PassThrough streams: tests write raw text in and read the
 * exact NDJSON lines the connection writes out.
 */
import { PassThrough } from 'node:stream';
import { Connection, type AcpWireError, type ConnectionOptions } from '../../lib';

/** One side of a test: the connection under test and the raw bytes around it. */
export class RawPeer {
  /** The connection under test. */
  readonly connection: Connection;
  /** What the peer writes: the connection's input. */
  readonly input = new PassThrough();
  /** What the connection writes: the peer reads it. */
  readonly output = new PassThrough();
  /** Every non-fatal error the connection emitted, in order. */
  readonly errors: AcpWireError[] = [];
  readonly #lines: string[] = [];
  readonly #waiters: ((line: string) => void)[] = [];
  #partial = '';

  constructor(options: ConnectionOptions = {}) {
    this.connection = new Connection(this.input, this.output, options);
    this.connection.on('warning', (error) => this.errors.push(error));
    this.output.setEncoding('utf8');
    this.output.on('data', (text: string) => this.#collect(text));
  }

  /** Writes raw text (bytes or a string) to the connection, exactly as given. */
  writeRaw(data: string | Uint8Array): void {
    this.input.write(data);
  }

  /** Writes `text` followed by a newline. */
  writeLine(text: string): void {
    this.input.write(text + '\n');
  }

  /** Resolves with the next line the connection writes (without its newline). */
  nextLine(): Promise<string> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Resolves with the next `count` lines the connection writes. */
  async nextLines(count: number): Promise<string[]> {
    const lines: string[] = [];
    for (let i = 0; i < count; i++) lines.push(await this.nextLine());
    return lines;
  }

  /**
   * Sends the request `{"id":"probe-N","method":"probe"}` (the connection must answer it, e.g.
   * with a handler or `-32601`) and resolves with every line written before its answer, which
   * proves the connection is still reading and says exactly what the earlier input produced.
   */
  async linesBeforeProbe(n = 0): Promise<string[]> {
    const id = `probe-${n}`;
    this.writeLine(JSON.stringify({ jsonrpc: '2.0', id, method: 'probe' }));
    const before: string[] = [];
    for (;;) {
      const line = await this.nextLine();
      const parsed = JSON.parse(line) as { id?: unknown };
      if (parsed.id === id) return before;
      before.push(line);
    }
  }

  /** Closes the connection and ends the raw input. */
  async close(): Promise<void> {
    await this.connection.close();
    this.input.end();
  }

  #collect(text: string): void {
    const parts = (this.#partial + text).split('\n');
    this.#partial = parts.pop() ?? '';
    for (const line of parts) {
      const waiter = this.#waiters.shift();
      if (waiter) waiter(line);
      else this.#lines.push(line);
    }
  }
}

/** A JSON value nested `depth` levels deep (`[[[…]]]`), as text; built without recursion. */
export function deeplyNestedArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}
