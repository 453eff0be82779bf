/** Helpers for framing specs: run a LineDecoder over chunks and record what it reports. */
import { type FrameTooLargeError, type JsonParseError, LineDecoder, type DecoderOptions } from '../../lib';

/** One report of a {@link LineDecoder}, in order. */
export type DecoderEvent = { kind: 'value'; value: unknown; line: string } | { kind: 'error'; error: JsonParseError | FrameTooLargeError };

/** Feeds `chunks` to a new decoder, then ends it (unless `end` is false); returns every report. */
export function decodeChunks(chunks: readonly (string | Uint8Array)[], options: DecoderOptions = {}, end = true): DecoderEvent[] {
  const events: DecoderEvent[] = [];
  const decoder = new LineDecoder(
    {
      value: (value, line) => events.push({ kind: 'value', value, line }),
      error: (error) => events.push({ kind: 'error', error }),
    },
    options,
  );
  for (const chunk of chunks) decoder.write(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  if (end) decoder.end();
  return events;
}

/** The decoded values among `events`. */
export function valuesOf(events: readonly DecoderEvent[]): unknown[] {
  return events.flatMap((e) => (e.kind === 'value' ? [e.value] : []));
}

/** The errors among `events`. */
export function decodeErrorsOf(events: readonly DecoderEvent[]): (JsonParseError | FrameTooLargeError)[] {
  return events.flatMap((e) => (e.kind === 'error' ? [e.error] : []));
}

/** Splits `bytes` at the given positions (any order, duplicates and out-of-range ignored). */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    chunks.push(Buffer.from(bytes.subarray(start, point)));
    start = point;
  }
  return chunks.filter((c) => c.length > 0);
}

/** Splits `bytes` into chunks of one byte each. */
export function bytewise(bytes: Uint8Array): Buffer[] {
  return Array.from(bytes, (b) => Buffer.from([b]));
}
