/**
 * Evidence: the lines a check saw, kept exactly as they crossed. A line is shown as its own text
 * when its bytes are UTF-8 without control characters (tab aside), and as base64 of its bytes
 * otherwise, so nothing is re-encoded, re-parsed or lost (an id of 2^53 stays as written, a line
 * that is not JSON stays as it was).
 *
 * @packageDocumentation
 */
import type { LineDirection, WireLine } from './wire-line';

/** One line of evidence in a JSON report: where it was seen, and its exact bytes. */
export interface EvidenceLine {
  /** Milliseconds since the run began. */
  readonly atMs: number;
  /** Which way it went: {@link LineDirection}. */
  readonly direction: LineDirection;
  /** The process (`agent-3`). */
  readonly process: string;
  /** The check under way. */
  readonly check: string;
  /** The line's exact text, when its bytes are UTF-8 without control characters (the `\n` left out). */
  readonly text?: string;
  /** Otherwise its bytes, in base64 (a `\r` before the `\n` included). */
  readonly base64?: string;
}

/** Whether a byte is an ASCII control character other than tab (UTF-8 encodes every other character in bytes above them). */
const isControl = (byte: number): boolean => (byte < 0x20 && byte !== 0x09) || byte === 0x7f;

/** Whether a line can be shown as its own text: valid UTF-8 and no control character but tab. */
export function isPrintable(line: WireLine): boolean {
  return line.isUtf8 && !line.bytes.some(isControl);
}

/** A line as JSON report evidence. */
export function evidenceOf(line: WireLine): EvidenceLine {
  const place = { atMs: Math.round(line.at * 1000) / 1000, direction: line.direction, process: line.process, check: line.check };
  return isPrintable(line) ? { ...place, text: line.bytes.toString('utf8') } : { ...place, base64: line.bytes.toString('base64') };
}

/** The mark of each direction in a trace: `>` to the process, `<` from it, `!` its stderr, `*` an event. */
const ARROWS: Record<LineDirection, string> = { out: '>', in: '<', err: '!', event: '*' };

/** The head of a line in an evidence trace: time, check, process and direction, in columns. */
export function traceHead(line: WireLine): string {
  return `${line.at.toFixed(3).padStart(10)}  ${line.check.padEnd(30)}  ${line.process.padEnd(8)}  ${ARROWS[line.direction]}  `;
}

/** A line's bytes as an evidence trace shows them: as they are when printable, else `b64:` and their base64. */
export function traceBody(line: WireLine): Buffer {
  return isPrintable(line) ? line.bytes : Buffer.from(`b64:${line.bytes.toString('base64')}`, 'ascii');
}
