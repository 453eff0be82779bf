/**
 * `acp-wire conduct`: runs an ACP proxy chain for a client on stdio, or one per TCP client.
 *
 * @packageDocumentation
 */
import { splitCommandLine } from '../acp/command-line';
import { Conductor, type ConductorOutcome } from '../acp/conductor';
import { DEFAULT_CHAIN_IDLE_TIMEOUT_MS, DEFAULT_MAX_CHAINS, listenConductor } from '../acp/conductor-listener';
import { createStderrLogger, defaultLogger, type Logger } from '../logger';
import { connectStdio } from '../transports/stdio';
import { UsageError, parseCommandArguments, parseDecimal, parseMilliseconds, parsePort } from './arguments';
import { STOP_SIGNALS, watchStopSignals } from './shutdown';
import { report, type Subcommand } from './subcommand';

const NAME = 'conduct';
const DEFAULT_KILL_TIMEOUT_MS = 2000;

const HELP = `usage: acp-wire conduct [options] [--] "<proxy command>"… "<agent command>"

Runs an ACP proxy chain: the client speaks to the conductor on stdin/stdout; each command is
started as a child process over its stdio (split into words as a shell would, without a shell);
the last one is the agent, the others are proxies in order.

options:
  --trace              print every line of every hop on stderr, with time and direction
  --tcp PORT           serve clients on 127.0.0.1:PORT instead of stdio: a chain per client,
                       started on the client's first byte; prints "listening PORT" on stdout
                       once ready (0 picks a free port); stops when stdin ends
  --max-chains N       with --tcp: how many clients are served at once; more are refused
                       (closed, with a line on stderr) (default ${DEFAULT_MAX_CHAINS})
  --idle-timeout MS    with --tcp: close a client that sent and received nothing for MS with
                       nothing in flight, and shut its chain down (default ${DEFAULT_CHAIN_IDLE_TIMEOUT_MS}, 0: never)
  --kill-timeout MS    how long a component may take to exit once its stdin is closed, before
                       SIGTERM, then SIGKILL as long again (default ${DEFAULT_KILL_TIMEOUT_MS})
  --request-timeout MS cancel a request forwarded toward the agent that is not answered within
                       MS, and answer it -32603 {"reason":"request_timeout"} (default 0: never)
  -h, --help           show this text

exit codes: 0 when the client's stdin ends (with --tcp: when stdin ends); 1 when a component died
or could not be started (named on stderr), or on a system error such as a port in use; 2 for bad
usage; 130/143 after SIGINT/SIGTERM (the chain is shut down first; a second signal kills it).`;

/** Parsed `conduct` arguments. */
interface ConductArgs {
  trace: boolean;
  tcpPort: number | undefined;
  maxChains: number | undefined;
  idleTimeoutMs: number | undefined;
  killTimeoutMs: number;
  requestTimeoutMs: number | undefined;
  commands: string[];
}

function parseConductArgs(argv: readonly string[]): ConductArgs {
  const { values, positionals } = parseCommandArguments(argv, {
    trace: { type: 'boolean' },
    tcp: { type: 'string' },
    'max-chains': { type: 'string' },
    'idle-timeout': { type: 'string' },
    'kill-timeout': { type: 'string' },
    'request-timeout': { type: 'string' },
  });
  const text = (name: string): string | undefined => values[name] as string | undefined;
  const tcpOnly = ['max-chains', 'idle-timeout'].find((name) => text(name) !== undefined);
  if (tcpOnly && text('tcp') === undefined) throw new UsageError(`--${tcpOnly} needs --tcp`);
  const args: ConductArgs = {
    trace: values.trace === true,
    tcpPort: optional(text('tcp'), (value) => parsePort('--tcp', value)),
    maxChains: optional(text('max-chains'), (value) => parseDecimal('--max-chains', value, 'a number', 1, 65535)),
    idleTimeoutMs: optional(text('idle-timeout'), (value) => parseMilliseconds('--idle-timeout', value)),
    killTimeoutMs: optional(text('kill-timeout'), (value) => parseMilliseconds('--kill-timeout', value)) ?? DEFAULT_KILL_TIMEOUT_MS,
    requestTimeoutMs: optional(text('request-timeout'), (value) => parseMilliseconds('--request-timeout', value)),
    commands: positionals,
  };
  if (args.commands.length === 0) throw new UsageError('give at least the agent command');
  for (const command of args.commands) splitCommandLine(command);
  return args;
}

function optional<T>(text: string | undefined, parse: (text: string) => T): T | undefined {
  return text === undefined ? undefined : parse(text);
}

/** Each connection's logger: a wire trace with `--trace`, else `ACP_WIRE_LOG` or warnings. */
function loggerFactory(trace: boolean): (name: string) => Logger {
  if (trace) return (name) => createStderrLogger({ level: 'trace', name });
  if (process.env.ACP_WIRE_LOG) return (name) => defaultLogger(name);
  return (name) => createStderrLogger({ level: 'warn', name });
}

/** Reports a chain that ended because of a component; returns whether it did. */
function reportOutcome(outcome: ConductorOutcome): boolean {
  if (outcome.reason === 'component not started') report(NAME, outcome.message);
  else if (outcome.reason === 'component ended') report(NAME, `${outcome.message}; the chain was shut down`);
  else return false;
  return true;
}

async function conductOnStdio(args: ConductArgs, logger: (name: string) => Logger): Promise<number> {
  const client = connectStdio({ name: 'client', logger: logger('client') });
  const conductor = new Conductor({
    client,
    components: args.commands,
    logger,
    killTimeoutMs: args.killTimeoutMs,
    requestTimeoutMs: args.requestTimeoutMs,
  });
  const signals = watchStopSignals({
    command: NAME,
    stop: () => void conductor.close(),
    chains: () => [conductor],
    killTimeoutMs: args.killTimeoutMs,
  });
  const outcome = await conductor.closed;
  signals.dispose();
  if (reportOutcome(outcome)) return 1;
  return signals.signal ? STOP_SIGNALS[signals.signal] : 0;
}

async function conductOnTcp(args: ConductArgs, logger: (name: string) => Logger): Promise<number> {
  let anyFailed = false;
  const listener = await listenConductor(
    { port: args.tcpPort! },
    {
      components: args.commands,
      logger,
      killTimeoutMs: args.killTimeoutMs,
      requestTimeoutMs: args.requestTimeoutMs,
      maxChains: args.maxChains,
      idleTimeoutMs: args.idleTimeoutMs,
      onChain: (conductor) => void conductor.closed.then((outcome) => (anyFailed = reportOutcome(outcome) || anyFailed)),
    },
  );
  process.stdout.write(`listening ${listener.port}\n`);
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const signals = watchStopSignals({ command: NAME, stop, chains: () => listener.chains, killTimeoutMs: args.killTimeoutMs });
  // In TCP mode stdin carries no protocol: its end is the signal to stop.
  process.stdin.once('end', stop).once('close', stop).once('error', stop);
  process.stdin.resume();
  await stopped;
  process.stdin.pause();
  process.stdin.unref?.();
  await listener.close();
  signals.dispose();
  if (anyFailed) return 1;
  return signals.signal ? STOP_SIGNALS[signals.signal] : 0;
}

/** The `conduct` subcommand. */
export const conduct: Subcommand = {
  name: NAME,
  summary: 'run an ACP proxy chain for a client on stdio, or one per client with --tcp',
  help: HELP,
  async run(argv) {
    const args = parseConductArgs(argv);
    const logger = loggerFactory(args.trace);
    return args.tcpPort === undefined ? conductOnStdio(args, logger) : conductOnTcp(args, logger);
  },
};
