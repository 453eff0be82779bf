/**
 * Trace files: one {@link TraceEvent} JSON object per line (`.jsons`), written as each event
 * happens, read back for the viewer.
 *
 * @packageDocumentation
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { TraceEvent } from './events';

/**
 * Writes trace events to a file, one JSON object per line.
 *
 * @remarks
 * Opening truncates an existing file. Each event is written with one synchronous `write()` as it
 * happens, so the file is complete up to the last event even if the process is killed, and a
 * viewer reading it meanwhile sees whole lines (at most a partial last one). A failed write does
 * not throw: writing stops, and the error is emitted once as a process warning — tracing never
 * breaks the chain it watches.
 * @example
 * ```ts
 * using file = TraceFileWriter.open('./trace.jsons');
 * file.write({ type: 'notification', ts: 0, protocol: 'acp', from: 'Client', to: 'Agent', method: 'ping', params: null });
 * ```
 */
export class TraceFileWriter {
  /** The file's path. */
  readonly path: string;
  #fd: number | undefined;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.#fd = fd;
  }

  /**
   * Creates (or truncates) the file at `path`.
   *
   * @throws TypeError if `path` is not a non-empty string
   * @throws the file system's error (e.g. `ENOENT`, `EACCES`) if it cannot be opened
   */
  static open(path: string): TraceFileWriter {
    if (typeof path !== 'string' || path === '') throw new TypeError('traceFile must be a non-empty path');
    return new TraceFileWriter(path, openSync(path, 'w'));
  }

  /** Appends one event as one line. Does nothing once closed or after a failed write. */
  write(event: TraceEvent): void {
    if (this.#fd === undefined) return;
    const line = serialize(event);
    try {
      writeSync(this.#fd, line);
    } catch (error) {
      this.#closeFd();
      process.emitWarning(`acp-wire: writing the trace file ${this.path} failed, tracing stopped: ${String(error)}`);
    }
  }

  /** Closes the file. Idempotent. */
  close(): void {
    this.#closeFd();
  }

  /** Same as {@link TraceFileWriter.close}. */
  [Symbol.dispose](): void {
    this.close();
  }

  #closeFd(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // Already unusable; nothing more to release.
    }
  }
}

/**
 * One event as a line. A value JSON cannot write (nested too deeply) is replaced by a string
 * saying so, so that the event — and its request/response pairing — stays in the trace.
 */
function serialize(event: TraceEvent): string {
  try {
    return `${JSON.stringify(event)}\n`;
  } catch (error) {
    const note = `[not traced: ${error instanceof Error ? error.message : String(error)}]`;
    return `${JSON.stringify(event.type === 'response' ? { ...event, payload: note } : { ...event, params: note })}\n`;
  }
}

/**
 * Parses the text of a trace file: one event per non-empty line.
 *
 * @remarks A last line without its newline is ignored (it may still be being written), and so is
 * a line that is not a JSON object. No other validation: see `TRACE_EVENT_SCHEMA` for that.
 */
export function parseTraceText(text: string): TraceEvent[] {
  const events: TraceEvent[] = [];
  const complete = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
  for (const line of complete.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) events.push(value as TraceEvent);
    } catch {
      // Not an event: skipped.
    }
  }
  return events;
}

/**
 * Reads a trace file (see {@link parseTraceText}).
 *
 * @throws the file system's error if the file cannot be read
 */
export function readTraceFile(path: string): TraceEvent[] {
  return parseTraceText(readFileSync(path, 'utf8'));
}
