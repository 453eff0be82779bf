/**
 * `acp-wire trace view PATH`: serves the trace viewer for a trace file; and the live viewer of
 * `acp-wire conduct --serve`.
 *
 * @packageDocumentation
 */
import type { TraceEvent } from '../trace/events';
import { serveTraceViewer, type TraceViewer } from '../trace/server';
import { TraceStore } from '../trace/store';
import { UsageError, parseCommandArguments, parsePort } from './arguments';
import { report, type Subcommand } from './subcommand';

const NAME = 'trace';

const HELP = `usage: acp-wire trace view [options] [--] PATH

Serves the trace viewer (a sequence diagram of a chain, see docs/tracing.md) for the trace file
PATH, written by "acp-wire conduct --trace-file PATH" (or the ACP Rust SDK conductor's --trace).
The file is read again on every poll of the page, so a capture can be watched as it grows.
Listens on 127.0.0.1 only; prints the page's address (http://127.0.0.1:PORT/) on stdout once
ready, and runs until SIGINT (Ctrl-C) or SIGTERM.

options:
  --port N     the port on 127.0.0.1 (default 0: a free one, printed)
  -h, --help   show this text

exit codes: 0 after SIGINT/SIGTERM (its normal end); 1 on a system error such as a port in use;
2 for bad usage.`;

/** Parsed `trace view` arguments. */
interface TraceViewArgs {
  path: string;
  port: number;
}

function parseTraceViewArgs(argv: readonly string[]): TraceViewArgs {
  const { values, positionals } = parseCommandArguments(argv, { port: { type: 'string' } });
  const [subcommand, ...rest] = positionals;
  if (subcommand === undefined) throw new UsageError('give a trace subcommand: view');
  if (subcommand !== 'view') throw new UsageError(`unknown trace subcommand ${JSON.stringify(subcommand)} (there is: view)`);
  if (rest.length === 0) throw new UsageError('view needs the path of a trace file');
  if (rest.length > 1) throw new UsageError(`view takes one trace file, got ${rest.length}`);
  if (rest[0] === '') throw new UsageError('view needs the path of a trace file, got ""');
  const port = values.port as string | undefined;
  return { path: rest[0]!, port: port === undefined ? 0 : parsePort('--port', port) };
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilStopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.removeListener('SIGINT', stop).removeListener('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
  });
}

/** The `trace` subcommand (`trace view PATH`). */
export const trace: Subcommand = {
  name: NAME,
  summary: 'serve the sequence-diagram viewer of a trace file (trace view PATH)',
  help: HELP,
  async run(argv) {
    const args = parseTraceViewArgs(argv);
    const viewer = await serveTraceViewer({ file: args.path, port: args.port });
    const stopped = untilStopSignal();
    process.stdout.write(`${viewer.url}\n`);
    await stopped;
    await viewer.close();
    return 0;
  },
};

/** A live viewer of one chain (`conduct --serve`): its trace-event sink, and how to stop it. */
export interface LiveTraceViewer {
  /** Pass as the conductor's `onTraceEvent`. */
  readonly onTraceEvent: (event: TraceEvent) => void;
  /** Stops serving the page. */
  close(): Promise<void>;
}

/**
 * Serves a live viewer on 127.0.0.1:`port` (0: a free port) and writes its address on stderr:
 * `acp-wire <command>: viewer http://127.0.0.1:PORT/`.
 *
 * @throws the operating system's error when it cannot listen (e.g. EADDRINUSE)
 */
export async function startLiveTraceViewer(command: string, port: number): Promise<LiveTraceViewer> {
  const store = new TraceStore();
  const viewer: TraceViewer = await serveTraceViewer({ store, port });
  report(command, `viewer ${viewer.url}`);
  return { onTraceEvent: (event) => store.push(event), close: () => viewer.close() };
}
