/**
 * NDJSON framing: bytes ⇄ JSON values, one value per line. Never looks inside a message.
 *
 * @packageDocumentation
 */
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { FrameTooLargeError, JsonParseError, SerializationError } from '../jsonrpc/errors';

/** The default limit on the length of one incoming line: 64 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

const NEWLINE = 0x0a;
const NEWLINE_BUFFER = Buffer.from('\n');
const CARRIAGE_RETURN = 0x0d;
const BYTE_ORDER_MARK = 0xfeff;
/** How many first bytes of a line over the limit a {@link FrameTooLargeError} keeps as its `head`. */
export const FRAME_HEAD_BYTES = 1024;
/** The bytes of a line kept to build that head: three more, for a byte order mark. */
const HEAD_SOURCE_BYTES = FRAME_HEAD_BYTES + 3;

/** What a {@link LineDecoder} reports for each line. */
export interface LineSink {
  /** A line that parsed as JSON. `line` is its text, without the `\n` (or `\r\n`) ending it. */
  value(value: unknown, line: string): void;
  /** A line that could not be decoded; the decoder goes on with the next line. */
  error(error: JsonParseError | FrameTooLargeError): void;
}

/** Options of a {@link LineDecoder} or {@link NdjsonDecoder}. */
export interface DecoderOptions {
  /** Longest accepted line in bytes, newline excluded. Default {@link DEFAULT_MAX_LINE_BYTES}. */
  maxLineBytes?: number;
}

/**
 * Validates a `maxLineBytes` option.
 *
 * @throws RangeError naming the option when it is not a positive safe integer
 */
function checkMaxLineBytes(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`maxLineBytes must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/**
 * The push parser under every framer: feed it byte chunks, it calls the sink once per line.
 *
 * @remarks
 * Lines are split on `\n` in bytes. A line within one chunk is decoded as UTF-8 once complete; a
 * line spread over several chunks is decoded chunk by chunk as it arrives (a `StringDecoder` carries
 * a multi-byte character split across two chunks), and its pieces are joined only by `JSON.parse`:
 * no byte of it is copied before decoding, as a byte buffer per chunk and their concatenation
 * were. Either way a multi-byte character split across chunks is never damaged. A trailing `\r` and blank lines (spaces, tabs,
 * `\r`) are skipped, and so is a UTF-8 byte order mark at the very start of the stream (RFC 8259
 * lets a parser ignore it). A line over the limit is discarded up to its newline and reported once
 * as a {@link FrameTooLargeError} carrying the line's first bytes; the parser then goes on. It
 * never throws.
 */
export class LineDecoder {
  readonly #sink: LineSink;
  readonly #max: number;
  /** The decoded text of the partial line (the line whose newline has not arrived yet). */
  #partText = '';
  /** Its length in bytes (what the limit counts), including bytes the decoder still holds. */
  #partBytes = 0;
  /** Copies of its first {@link HEAD_SOURCE_BYTES} bytes: the head of a {@link FrameTooLargeError}. */
  #headParts: Buffer[] = [];
  /** Decodes the partial line's chunks; holds the bytes of a character split between two. */
  #utf8 = new StringDecoder('utf8');
  #discarding = false;
  /** No line has ended yet: a byte order mark may still open the stream. */
  #isFirstLine = true;

  constructor(sink: LineSink, options: DecoderOptions = {}) {
    this.#sink = sink;
    this.#max = checkMaxLineBytes(options.maxLineBytes);
  }

  /** Feeds one chunk of bytes. */
  write(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(NEWLINE);
    while (nl !== -1) {
      if (this.#discarding) {
        this.#discarding = false;
      } else if (this.#partBytes === 0) {
        this.#line(chunk, start, nl);
      } else {
        this.#append(chunk.subarray(start, nl));
        if (!this.#discarding) this.#flushPart();
        this.#discarding = false;
      }
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length && !this.#discarding) this.#append(chunk.subarray(start));
  }

  /**
   * Feeds one whole message-framed frame (a WebSocket text frame), its bytes from `start` on:
   * decoded as one line, as `write(frameToLine(frame))` would, without copying it to append a
   * newline.
   *
   * @remarks Only for a decoder fed nothing but frames: a partial line written before would be
   * joined to it.
   */
  writeFrame(frame: Buffer, start: number): void {
    if (frame.indexOf(NEWLINE, start) === -1) return this.#line(frame, start, frame.length);
    const line = frameToLine(start === 0 ? frame : frame.subarray(start));
    if (line !== undefined) this.write(line);
  }

  /** Ends the input: a last line without a newline is decoded. */
  end(): void {
    if (!this.#discarding && this.#partBytes > 0) this.#flushPart();
    this.discard();
  }

  /**
   * Drops a partial line without decoding it: for an input that was destroyed rather than ended,
   * whose last bytes are not a line the peer finished.
   */
  discard(): void {
    this.#discarding = false;
    this.#resetPart();
  }

  #resetPart(): void {
    if (this.#partBytes > 0) this.#utf8 = new StringDecoder('utf8');
    this.#partText = '';
    this.#partBytes = 0;
    this.#headParts = [];
  }

  #append(bytes: Buffer): void {
    if (this.#partBytes + bytes.length > this.#max) {
      const head = this.#head(firstBytes(this.#headParts, bytes, HEAD_SOURCE_BYTES));
      this.#isFirstLine = false;
      this.#resetPart();
      this.#discarding = true;
      this.#sink.error(new FrameTooLargeError(this.#max, { head }));
      return;
    }
    // Copy the head's bytes only: the caller may reuse its chunk buffer once write() returns.
    if (this.#partBytes < HEAD_SOURCE_BYTES) this.#headParts.push(Buffer.from(bytes.subarray(0, HEAD_SOURCE_BYTES - this.#partBytes)));
    this.#partText += this.#utf8.write(bytes);
    this.#partBytes += bytes.length;
  }

  /** The partial line is complete: decode what the decoder still holds and handle the line. */
  #flushPart(): void {
    let text = this.#partText + this.#utf8.end();
    this.#partText = '';
    this.#partBytes = 0;
    this.#headParts = [];
    if (this.#isFirstLine) {
      this.#isFirstLine = false;
      // U+FEFF first is exactly the bytes EF BB BF first: a byte order mark.
      if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
    }
    if (text.charCodeAt(text.length - 1) === CARRIAGE_RETURN) text = text.slice(0, -1);
    if (text.length > 0) this.#parse(text);
  }

  #line(buf: Buffer, start: number, end: number): void {
    if (end - start > this.#max) {
      const head = this.#head(buf.subarray(start, start + HEAD_SOURCE_BYTES));
      this.#isFirstLine = false;
      this.#sink.error(new FrameTooLargeError(this.#max, { head }));
      return;
    }
    if (this.#isFirstLine) {
      this.#isFirstLine = false;
      if (hasByteOrderMark(buf, start, end)) start += 3;
    }
    // A CRLF line's `\r` is not part of its text (the sink's `line` goes into logs and id echo).
    if (end > start && buf[end - 1] === CARRIAGE_RETURN) end--;
    if (end === start) return;
    this.#parse(buf.toString('utf8', start, end));
  }

  #parse(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (!isBlank(text)) this.#sink.error(new JsonParseError(text, { cause: err }));
      return;
    }
    this.#sink.value(value, text);
  }

  /** The first bytes of a line over the limit as text (without a stream-opening byte order mark). */
  #head(bytes: Buffer): string {
    const start = this.#isFirstLine && hasByteOrderMark(bytes, 0, bytes.length) ? 3 : 0;
    return bytes.toString('utf8', start, Math.min(bytes.length, start + FRAME_HEAD_BYTES));
  }
}

/** At most the first `count` bytes of `parts` followed by `last`, copying no more than that. */
function firstBytes(parts: readonly Buffer[], last: Buffer, count: number): Buffer {
  const taken: Buffer[] = [];
  let size = 0;
  for (const part of [...parts, last]) {
    if (size >= count) break;
    const piece = part.subarray(0, count - size);
    taken.push(piece);
    size += piece.length;
  }
  return Buffer.concat(taken, size);
}

/** Whether the bytes from `start` to `end` start with a UTF-8 byte order mark (EF BB BF). @internal */
export function hasByteOrderMark(buf: Buffer, start: number, end: number): boolean {
  return end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf;
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * Turns one text frame into one NDJSON line (with its `\n`), or `undefined` for a blank frame.
 *
 * @remarks
 * JSON text never holds a raw newline inside a string, so a newline in a frame that parses is
 * whitespace between tokens (a pretty-printed message): it becomes a space, and the line means
 * the same message, id bytes included. A frame that does not parse must stay invalid as one
 * line: its newlines become U+0001, a character JSON allows nowhere, so the peer gets exactly
 * one `-32700` (two messages in one frame are one invalid frame, not two messages).
 *
 * @internal
 */
export function frameToLine(frame: Buffer): Buffer | undefined {
  if (frame.indexOf(NEWLINE) === -1) return Buffer.concat([frame, NEWLINE_BUFFER], frame.length + 1);
  const text = frame.toString('utf8');
  if (text.trim() === '') return undefined;
  let isJson = true;
  try {
    JSON.parse(text);
  } catch {
    isJson = false;
  }
  return Buffer.from(`${text.replaceAll('\n', isJson ? ' ' : '\u0001')}\n`, 'utf8');
}

/**
 * Serializes one message as an NDJSON line (with its `\n`).
 *
 * @throws SerializationError when the value cannot be serialized (a BigInt, a cycle, `undefined`)
 */
export function encodeMessage(message: unknown): string {
  return `${encodeJson(message)}\n`;
}

/**
 * Serializes one message as JSON text, without a newline: what a connection's writer takes (it
 * adds the newline only where the transport needs one; see `LineWriter`).
 *
 * @throws SerializationError when the value cannot be serialized (a BigInt, a cycle, `undefined`)
 * @internal
 */
export function encodeJson(message: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(message);
  } catch (err) {
    throw new SerializationError('the message cannot be serialized as JSON', { cause: err });
  }
  if (text === undefined) throw new SerializationError('the message serializes to nothing');
  return text;
}

/**
 * A Transform from NDJSON bytes to JSON values (readable side in object mode).
 *
 * @remarks
 * A line that cannot be decoded is pushed as its error object (a {@link JsonParseError} or
 * {@link FrameTooLargeError} instance) in its place in the sequence, so a consumer can answer it in
 * order; the stream does not error and goes on. Connections do not use this class (they run a
 * {@link LineDecoder} directly on the input's chunks); it is for users who want a stream.
 *
 * @example
 * ```ts
 * socket.pipe(new NdjsonDecoder()).on('data', (value) => console.log(value));
 * ```
 */
export class NdjsonDecoder extends Transform {
  readonly #decoder: LineDecoder;

  constructor(options: DecoderOptions = {}) {
    super({ readableObjectMode: true });
    this.#decoder = new LineDecoder({ value: (value) => this.push(value ?? NULL_VALUE), error: (error) => this.push(error) }, options);
  }

  /** Decodes one chunk of bytes; called by the stream machinery, not by users. */
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#decoder.write(chunk);
    callback();
  }

  /** Delivers a last line without a newline when the input ends; called by the stream machinery. */
  override _flush(callback: TransformCallback): void {
    this.#decoder.end();
    callback();
  }
}

/**
 * The value an {@link NdjsonDecoder} pushes for a line that is JSON `null` (a stream cannot carry
 * `null` itself).
 */
export const NULL_VALUE: unique symbol = Symbol('acp-wire.null');

/**
 * A Transform from JSON values (writable side in object mode) to NDJSON bytes, one line each.
 *
 * @remarks A value that cannot be serialized fails the write with a {@link SerializationError}.
 */
export class NdjsonEncoder extends Transform {
  constructor() {
    super({ writableObjectMode: true });
  }

  /** Encodes one message as a line; called by the stream machinery, not by users. */
  override _transform(value: unknown, _encoding: BufferEncoding, callback: TransformCallback): void {
    let line: string;
    try {
      line = encodeMessage(value);
    } catch (err) {
      callback(err as Error);
      return;
    }
    callback(null, line);
  }
}
