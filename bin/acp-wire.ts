#!/usr/bin/env node
/**
 * The `acp-wire` command line: `acp-wire conduct "<proxy command>"… "<agent command>"` runs an ACP
 * proxy chain for a client on stdio (or on TCP with `--tcp PORT`).
 *
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  CommandLineError,
  Conductor,
  connectStdio,
  createStderrLogger,
  defaultLogger,
  isPeerUrl,
  socketConnection,
  splitCommandLine,
  type Connection,
  type Logger,
} from '../lib';
import { connectComponents, listenForClients, parseListen, type ListenAddress } from '../lib/cli/remote-conduct';
import { CliUsageError, runServe } from '../lib/cli/serve';

const USAGE = `usage: acp-wire conduct [--trace] [--tcp PORT] [--] "<proxy command>"… "<agent command>"
       acp-wire conduct [--trace] --listen ADDRESS [--] "<proxy command or URL>"… "<agent command or URL>"
       acp-wire serve [--host HOST] [--port PORT] "<agent command>"   (acp-wire serve --help)

Runs an ACP proxy chain: the client speaks to the conductor on stdin/stdout; each command is
started as a child process over its stdio (split into words as a shell would, without a shell);
the last one is the agent, the others are proxies in order. A component may also be a URL of a
component already running elsewhere: ws://, wss://, http://, https:// or tcp://HOST:PORT.

  --trace      print every line of every hop on stderr, with time and direction
  --tcp PORT   serve clients on 127.0.0.1:PORT instead of stdio (one chain per connection);
               prints "listening PORT" on stdout once ready (0 picks a free port)
  --listen ADDRESS
               serve clients over WebSocket and Streamable HTTP (one chain per connection):
               PORT, HOST:PORT or ws://HOST:PORT/PATH (host 127.0.0.1, path /acp by default);
               prints "listening ws://HOST:PORT/PATH" on stdout once ready
               (ACP_WIRE_TOKEN, when set, is the bearer token clients must send, and the one
               sent to URL components)
  --help       show this text
  --version    show the version

Exit code: 0 when the client's stdin ends, 1 when a component died (named on stderr), 2 for
bad usage, 130/143 after SIGINT/SIGTERM (the chain is shut down first).`;

/** Parsed `conduct` arguments. */
interface ConductArgs {
  trace: boolean;
  tcpPort: number | undefined;
  listen: ListenAddress | undefined;
  commands: string[];
}

/** A usage error: printed with the usage text, exit code 2. */
class UsageError extends Error {}

function parseConductArgs(argv: readonly string[]): ConductArgs {
  const args: ConductArgs = { trace: false, tcpPort: undefined, listen: undefined, commands: [] };
  let options = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (options && arg === '--') options = false;
    else if (options && arg === '--trace') args.trace = true;
    else if (options && arg === '--tcp') args.tcpPort = parsePort(argv[++i]);
    else if (options && arg.startsWith('--tcp=')) args.tcpPort = parsePort(arg.slice('--tcp='.length));
    else if (options && (arg === '--listen' || arg.startsWith('--listen='))) args.listen = parseListenArg(arg === '--listen' ? argv[++i] : arg.slice(9));
    else if (options && arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else args.commands.push(arg);
  }
  if (args.commands.length === 0) throw new UsageError('give at least the agent command');
  if (args.listen && args.tcpPort !== undefined) throw new UsageError('give --tcp or --listen, not both');
  for (const command of args.commands) if (!isPeerUrl(command)) splitCommandLine(command);
  return args;
}

function parseListenArg(text: string | undefined): ListenAddress {
  try {
    return parseListen(text ?? '');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function parsePort(text: string | undefined): number {
  const port = Number(text);
  if (text === undefined || text === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--tcp needs a port from 0 to 65535, got ${text ?? 'nothing'}`);
  }
  return port;
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

/**
 * Runs one chain; resolves with whether a component died. The client's connection is opened only
 * once the URL components are connected, so nothing the client sends meets a chain not there yet.
 */
async function runChain(openClient: () => Connection, args: ConductArgs, logger: (name: string) => Logger): Promise<boolean> {
  let components;
  try {
    components = await connectComponents(args.commands, logger);
  } catch (error) {
    report(`could not connect a component: ${error instanceof Error ? error.message : String(error)}`);
    await openClient().close();
    return true;
  }
  const conductor = new Conductor({ client: openClient(), components, logger });
  const outcome = await conductor.closed;
  if (outcome.reason !== 'component ended') return false;
  report(`${outcome.message}; the chain was shut down`);
  return true;
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

async function conductOnStdio(args: ConductArgs, logger: (name: string) => Logger): Promise<number> {
  let client: Connection | undefined;
  let signalled: keyof typeof SIGNAL_EXIT_CODES | undefined;
  const stop = (signal: keyof typeof SIGNAL_EXIT_CODES): void => {
    signalled ??= signal;
    void client?.close();
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  const open = (): Connection => {
    client = connectStdio({ name: 'client', logger: logger('client') });
    if (signalled) void client.close();
    return client;
  };
  const died = await runChain(open, args, logger);
  process.removeListener('SIGINT', stop).removeListener('SIGTERM', stop);
  if (died) return 1;
  return signalled ? SIGNAL_EXIT_CODES[signalled] : 0;
}

/** Resolves when stdin ends (with `undefined`) or on SIGINT/SIGTERM (with the signal). */
function untilStopped(): Promise<keyof typeof SIGNAL_EXIT_CODES | undefined> {
  return new Promise((resolve) => {
    process.stdin.once('end', () => resolve(undefined)).once('close', () => resolve(undefined));
    process.once('SIGINT', () => resolve('SIGINT')).once('SIGTERM', () => resolve('SIGTERM'));
    process.stdin.resume();
  });
}

async function conductOnTcp(args: ConductArgs, logger: (name: string) => Logger): Promise<number> {
  const chains = new Set<Promise<boolean>>();
  const clients = new Set<Connection>();
  const server = createServer((socket) => {
    const open = (): Connection => {
      const client = socketConnection(socket, { name: 'client', logger: logger('client') });
      clients.add(client);
      client.once('close', () => clients.delete(client));
      return client;
    };
    chains.add(runChain(open, args, logger));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(args.tcpPort!, '127.0.0.1', () => resolve());
  });
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
  await untilStopped();
  process.stdin.pause();
  process.stdin.unref?.();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all([...clients].map((client) => client.close()));
  await closed;
  const results = await Promise.all(chains);
  return results.includes(true) ? 1 : 0;
}

async function conductOnRemote(args: ConductArgs, logger: (name: string) => Logger): Promise<number> {
  const chains = new Set<Promise<boolean>>();
  const listener = await listenForClients(args.listen!, (openClient) => void chains.add(runChain(openClient, args, logger)), logger('client'));
  const signal = await untilStopped();
  process.stdin.pause();
  process.stdin.unref?.();
  await listener.close();
  const results = await Promise.all(chains);
  if (results.includes(true)) return 1;
  return signal ? SIGNAL_EXIT_CODES[signal] : 0;
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
  if (command === 'serve') return runServe(rest);
  if (command !== 'conduct') throw new UsageError(command === undefined ? 'no command given' : `unknown command ${command}`);
  const args = parseConductArgs(rest);
  const logger = loggerFactory(args.trace);
  if (args.listen) return conductOnRemote(args, logger);
  return args.tcpPort === undefined ? conductOnStdio(args, logger) : conductOnTcp(args, logger);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliUsageError) {
      process.stderr.write(`acp-wire serve: ${error.message}\n${error.usage}\n`);
      process.exitCode = 2;
    } else if (error instanceof UsageError || error instanceof CommandLineError) {
      report(error.message);
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 2;
    } else {
      report(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exitCode = 1;
    }
  },
);
