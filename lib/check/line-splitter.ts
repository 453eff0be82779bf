/**
 * Bytes cut into lines as they arrive, without decoding them: a line split across chunks (inside a
 * UTF-8 character too) comes out whole, exactly as it was written.
 *
 * @packageDocumentation
 */

/** Cuts a byte stream into lines at each `\n` (the `\n` dropped, a `\r` before it kept). */
export class LineSplitter {
  #pending: Buffer[] = [];

  /** The lines `chunk` completes, in order. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.#pending.push(chunk.subarray(start, end));
      lines.push(Buffer.concat(this.#pending));
      this.#pending = [];
      start = end + 1;
    }
    if (start < chunk.length) this.#pending.push(chunk.subarray(start));
    return lines;
  }

  /** The last line, when the stream ended without a `\n` after it. */
  end(): Buffer[] {
    const rest = this.#pending;
    this.#pending = [];
    return rest.length === 0 ? [] : [Buffer.concat(rest)];
  }
}
