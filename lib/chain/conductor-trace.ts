/**
 * The tracing of one conductor: its trace options, the recorder, and the loggers that feed it.
 *
 * @packageDocumentation
 */
import type { ComponentRole } from './chain-component';
import { defaultLogger, type Logger } from '../support/logger';
import type { TraceEvent } from '../trace/events';
import type * as FileModule from '../trace/file';
import type * as RecorderModule from '../trace/recorder';

/** The trace options of a conductor. */
export interface ConductorTraceOptions {
  /**
   * Writes a trace file at this path (truncated first), one `TraceEvent` per line, flushed as each
   * happens: the format of the ACP Rust SDK conductor's `--trace`, which its viewer reads.
   */
  traceFile?: string;
  /** Receives every trace event as it happens (e.g. a `TraceStore` for a live viewer). */
  onTraceEvent?: (event: TraceEvent) => void;
}

/** A conductor's tracing, while it runs. @internal */
export interface ConductorTrace {
  /** The logger factory of component `index`: taps its connection, then logs through `base`. */
  loggerFor(index: number, role: ComponentRole, base: ((name: string) => Logger) | undefined): (name: string) => Logger;
  /** Closes the trace file, if any. */
  close(): void;
}

/**
 * Starts a conductor's tracing, or returns `undefined` when no trace option is set.
 *
 * @throws TypeError for an invalid option; the file system's error if the file cannot be opened
 * @internal
 */
export function startConductorTrace(options: ConductorTraceOptions): ConductorTrace | undefined {
  const { traceFile, onTraceEvent } = options;
  if (onTraceEvent !== undefined && typeof onTraceEvent !== 'function') throw new TypeError('onTraceEvent must be a function');
  if (traceFile === undefined && onTraceEvent === undefined) return undefined;
  // Loaded here, not at the top: a conductor that traces nothing never loads the trace modules.
  const { TraceFileWriter } = require('../trace/file') as typeof FileModule;
  const { TraceRecorder, tapLogger } = require('../trace/recorder') as typeof RecorderModule;
  const file = traceFile === undefined ? undefined : TraceFileWriter.open(traceFile);
  const recorder = new TraceRecorder((event) => {
    file?.write(event);
    onTraceEvent?.(event);
  });
  return {
    loggerFor: (index, role, base) => (name) =>
      tapLogger(base?.(name) ?? defaultLogger(name), (direction, message) => recorder.observe({ index, role, direction, message })),
    close: () => file?.close(),
  };
}
