/**
 * `--trace-file`: every line of a run as it crossed, in order, tagged with the check under way and
 * the process, readable in a terminal (`less`, `grep`): one trace line per wire line.
 *
 * @packageDocumentation
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { traceBody, traceHead } from './evidence';
import type { WireLine } from './wire-line';

/** The text of a trace's header (each line starting with `#`). */
function header(command: string, version: string): string {
  return [
    `# acp-wire check ${version} evidence trace: ${command}`,
    '# milliseconds since the run began, the check under way, the process, then > to it, < from it,',
    '# ! its stderr, * an event; then the line exactly as it crossed (b64: its bytes in base64 when',
    '# they are not UTF-8 or hold a control character, a \\r before the \\n included)',
    '',
  ].join('\n');
}

/** An evidence trace being written to a file (synchronously, line by line: nothing is lost when the run is stopped). */
export class EvidenceTrace {
  readonly #fd: number;
  #isClosed = false;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /**
   * Creates (or truncates) the file at `path` and writes the header.
   *
   * @throws Error (the system error) when the file cannot be opened
   */
  static open(path: string, command: string, version: string): EvidenceTrace {
    const trace = new EvidenceTrace(openSync(path, 'w'));
    writeSync(trace.#fd, header(command, version));
    return trace;
  }

  /** Writes one line (nothing once closed). */
  write(line: WireLine): void {
    if (this.#isClosed) return;
    writeSync(this.#fd, Buffer.concat([Buffer.from(traceHead(line), 'utf8'), traceBody(line), Buffer.from('\n')]));
  }

  /** Closes the file. Idempotent. */
  close(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    closeSync(this.#fd);
  }
}
