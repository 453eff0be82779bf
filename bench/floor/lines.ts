/**
 * The no-library floor's one shared piece: NDJSON lines in (a chunk scan, `JSON.parse`) and out
 * (`JSON.stringify` + one `write()`). No validation, no backpressure, no error handling: it only
 * has to carry a chain's first `initialize` so the chain's start-up cost without any library can
 * be timed (see `raw-conductor.ts`).
 *
 * @packageDocumentation
 */
import type { Readable, Writable } from 'node:stream';

/** A JSON-RPC message as the floor programs read it. */
export interface RawMessage {
  id?: number | string;
  method?: string;
  params?: { method?: string; params?: unknown } & Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

/** Calls `onMessage` with each line of `input`, parsed. */
export function readLines(input: Readable, onMessage: (message: RawMessage) => void): void {
  let rest = '';
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line.trim() !== '') onMessage(JSON.parse(line) as RawMessage);
  });
}

/** Writes `message` as one line. */
export function writeLine(output: Writable, message: object): void {
  output.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}
