/** Minimal typings of `ndjson` 2 (it ships none), for the framing comparison. */
declare module 'ndjson' {
  import type { Transform } from 'node:stream';
  /** A Transform from NDJSON text to parsed values. */
  export function parse(options?: { strict?: boolean }): Transform;
  /** A Transform from values to NDJSON text (`os.EOL` after each). */
  export function stringify(options?: object): Transform;
}
