#!/usr/bin/env node
/**
 * The `acp-wire` command line: `acp-wire conduct "<proxy command>"… "<agent command>"` runs an ACP
 * proxy chain for a client on stdio (or on TCP with `--tcp PORT`).
 *
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CommandLineError,
  Conductor,
  connectStdio,
  createStderrLogger,
  defaultLogger,
  TraceStore,
  listenTcp,
  serveTraceViewer,
  splitCommandLine,
  type Connection,
  type Logger,
  type TraceViewer,
} from '../lib';

const USAGE = `usage: acp-wire conduct [--trace] [--tcp PORT] [--] "<proxy command>"… "<agent command>"
       acp-wire conduct [--trace] [--trace-file PATH] [--serve [--port N]] [--] "<proxy command>"… "<agent command>"
       acp-wire trace view PATH [--port N]

Runs an ACP proxy chain: the client speaks to the conductor on stdin/stdout; each command is
started as a child process over its stdio (split into words as a shell would, without a shell);
the last one is the agent, the others are proxies in order.

  --trace      print every line of every hop on stderr, with time and direction
  --trace-file PATH
               write every message between the components to PATH (truncated first), one
               JSON event per line: the ACP Rust SDK conductor's trace format (see docs/tracing.md)
  --serve      serve a live sequence diagram of the chain on 127.0.0.1 while it runs; prints
               "viewer http://127.0.0.1:PORT/" on stderr (--port N picks the port, default free)
  --tcp PORT   serve clients on 127.0.0.1:PORT instead of stdio (one chain per connection);
               prints "listening PORT" on stdout once ready (0 picks a free port)
  --help       show this text
  --version    show the version

Exit code: 0 when the client's stdin ends, 1 when a component died (named on stderr), 2 for
bad usage, 130/143 after SIGINT/SIGTERM (the chain is shut down first).

trace view PATH serves the viewer for a saved (or growing) trace file on 127.0.0.1, prints its
address on stdout, and runs until SIGINT or SIGTERM (exit 0).`;

/** Parsed `conduct` arguments. */
interface ConductArgs {
  trace: boolean;
  tcpPort: number | undefined;
  traceFile: string | undefined;
  serve: boolean;
  viewerPort: number | undefined;
  commands: string[];
}

/** A usage error: printed with the usage text, exit code 2. */
class UsageError extends Error {}

function parseConductArgs(argv: readonly string[]): ConductArgs {
  const args: ConductArgs = { trace: false, tcpPort: undefined, traceFile: undefined, serve: false, viewerPort: undefined, commands: [] };
  let options = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (options && arg === '--') options = false;
    else if (options && arg === '--trace') args.trace = true;
    else if (options && arg === '--serve') args.serve = true;
    else if (options && (arg === '--tcp' || arg.startsWith('--tcp='))) args.tcpPort = parsePort('--tcp', optionValue(argv, arg, () => ++i));
    else if (options && (arg === '--port' || arg.startsWith('--port='))) args.viewerPort = parsePort('--port', optionValue(argv, arg, () => ++i));
    else if (options && (arg === '--trace-file' || arg.startsWith('--trace-file='))) args.traceFile = tracePath(optionValue(argv, arg, () => ++i));
    else if (options && arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else args.commands.push(arg);
  }
  if (args.commands.length === 0) throw new UsageError('give at least the agent command');
  if (args.viewerPort !== undefined && !args.serve) throw new UsageError('--port needs --serve');
  if (args.tcpPort !== undefined && (args.serve || args.traceFile !== undefined)) {
    throw new UsageError('--trace-file and --serve trace one chain: they cannot be used with --tcp');
  }
  for (const command of args.commands) splitCommandLine(command);
  return args;
}

/** The value of `--name VALUE` (the next argument) or `--name=VALUE`. */
function optionValue(argv: readonly string[], arg: string, next: () => number): string | undefined {
  const eq = arg.indexOf('=');
  return eq === -1 ? argv[next()] : arg.slice(eq + 1);
}

function parsePort(option: string, text: string | undefined): number {
  const port = Number(text);
  if (text === undefined || text === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`${option} needs a port from 0 to 65535, got ${text ?? 'nothing'}`);
  }
  return port;
}

function tracePath(text: string | undefined): string {
  if (text === undefined || text === '') throw new UsageError('--trace-file needs a path');
  return text;
}

/** Each connection's logger: a wire trace with `--trace`, else `ACP_WIRE_LOG` or warnings. */
function loggerFactory(trace: boolean): (name: string) => Logger {
  if (trace) return (name) => createStderrLogger({ level: 'trace', name });
  if (process.env.ACP_WIRE_LOG) return (name) => defaultLogger(name);
  return (name) => createStderrLogger({ level: 'warn', name });
}

function report(message: string): void {
  process.stderr.write(`acp-wire conduct: ${message}\n`);
}

/** Runs one chain for `client`; resolves with whether a component died. */
async function runChain(client: Connection, args: ConductArgs, logger: (name: string) => Logger): Promise<boolean> {
  const store = args.serve ? new TraceStore() : undefined;
  const conductor = new Conductor({
    client,
    components: args.commands,
    logger,
    traceFile: args.traceFile,
    ...(store ? { onTraceEvent: (event) => store.push(event) } : {}),
  });
  let viewer: TraceViewer | undefined;
  if (store) {
    viewer = await serveTraceViewer({ store, port: args.viewerPort });
    report(`viewer ${viewer.url}`);
  }
  const outcome = await conductor.closed;
  await viewer?.close();
  if (outcome.reason !== 'component ended') return false;
  report(`${outcome.message}; the chain was shut down`);
  return true;
}

/** `acp-wire trace view PATH [--port N]`: serves the viewer for a trace file until a signal. */
async function traceView(argv: readonly string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand !== 'view') throw new UsageError(subcommand === undefined ? 'trace needs a subcommand: view' : `unknown trace subcommand ${subcommand}`);
  let path: string | undefined;
  let port: number | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--port' || arg.startsWith('--port=')) port = parsePort('--port', optionValue(rest, arg, () => ++i));
    else if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else if (path === undefined) path = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (path === undefined) throw new UsageError('trace view needs the path of a trace file');
  const viewer = await serveTraceViewer({ file: path, port });
  process.stdout.write(`${viewer.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve).once('SIGTERM', resolve);
  });
  await viewer.close();
  return 0;
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

async function conductOnStdio(args: ConductArgs, logger: (name: string) => Logger): Promise<number> {
  const client = connectStdio({ name: 'client', logger: logger('client') });
  let signalled: keyof typeof SIGNAL_EXIT_CODES | undefined;
  const stop = (signal: keyof typeof SIGNAL_EXIT_CODES): void => {
    signalled ??= signal;
    void client.close();
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  const died = await runChain(client, args, logger);
  process.removeListener('SIGINT', stop).removeListener('SIGTERM', stop);
  if (died) return 1;
  return signalled ? SIGNAL_EXIT_CODES[signalled] : 0;
}

async function conductOnTcp(args: ConductArgs, logger: (name: string) => Logger): Promise<number> {
  const chains = new Set<Promise<boolean>>();
  const listener = await listenTcp(
    { port: args.tcpPort! },
    (client) => {
      const chain = runChain(client, args, logger);
      chains.add(chain);
    },
    { name: 'client', logger: logger('client') },
  );
  process.stdout.write(`listening ${listener.port}\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.stdin.once('end', stop).once('close', stop);
    process.once('SIGINT', stop).once('SIGTERM', stop);
    process.stdin.resume();
  });
  process.stdin.pause();
  process.stdin.unref?.();
  await listener.close();
  const results = await Promise.all(chains);
  return results.includes(true) ? 1 : 0;
}

function version(): string {
  const text = readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === '--version') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command === 'trace') return traceView(rest);
  if (command !== 'conduct') throw new UsageError(command === undefined ? 'no command given' : `unknown command ${command}`);
  const args = parseConductArgs(rest);
  const logger = loggerFactory(args.trace);
  return args.tcpPort === undefined ? conductOnStdio(args, logger) : conductOnTcp(args, logger);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof CommandLineError) {
      report(error.message);
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 2;
    } else {
      report(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exitCode = 1;
    }
  },
);
