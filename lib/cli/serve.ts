/**
 * `acp-wire serve [--host H] [--port P] "<agent command>"`: exposes a stdio agent command over
 * WebSocket and Streamable HTTP at `/acp`, one agent process per client connection.
 *
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import type { Duplex } from 'node:stream';
import { splitCommandLine } from '../acp/command-line';
import { listenRemoteStreams, type RemoteClientInfo, type RemoteListener } from '../transports/remote-server';
import { DEFAULT_PATH } from '../transports/limits';

/** The usage text of `serve`. */
export const SERVE_USAGE = `usage: acp-wire serve [--host HOST] [--port PORT] [--path PATH] [--allow-origin ORIGIN]… [--] "<agent command>"

Exposes an ACP agent that speaks on its stdio over the network: WebSocket (ws://HOST:PORT/acp)
and Streamable HTTP (http://HOST:PORT/acp) on one port. Each client connection gets its own agent
process (the command split into words as a shell would, without a shell), ended with it.
Prints "listening ws://HOST:PORT/PATH" on stdout once ready; logs go to stderr.

  --host HOST           address to bind (default 127.0.0.1: this machine only)
  --port PORT           port (default 0: a free one, printed)
  --path PATH           path (default /acp)
  --allow-origin ORIGIN accept browser pages of this origin (repeatable; none by default)
  --help                show this text

Set ACP_WIRE_TOKEN to require "Authorization: Bearer <token>" from every client.
Stops on SIGINT or SIGTERM (exit 130/143), ending every agent process first.`;

/** A usage error of a subcommand: printed with its usage text, exit code 2. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

/** Parsed `serve` arguments. */
export interface ServeArgs {
  host: string | undefined;
  port: number;
  path: string;
  allowedOrigins: string[];
  command: string[];
}

/** Parses the arguments after `serve`. @throws CliUsageError */
export function parseServeArgs(argv: readonly string[]): ServeArgs | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        path: { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new CliUsageError((error as Error).message, SERVE_USAGE);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new CliUsageError('give exactly one agent command (quote it)', SERVE_USAGE);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535 || values.port === '') {
    throw new CliUsageError(`--port needs a port from 0 to 65535, got ${values.port}`, SERVE_USAGE);
  }
  let command: string[];
  try {
    command = splitCommandLine(positionals[0]!);
  } catch (error) {
    throw new CliUsageError((error as Error).message, SERVE_USAGE);
  }
  if (command.length === 0) throw new CliUsageError('the agent command is empty', SERVE_USAGE);
  return { host: values.host, port, path: values.path ?? DEFAULT_PATH, allowedOrigins: values['allow-origin'] ?? [], command };
}

/** How long an agent may take to exit after its stdin ends before SIGTERM (then SIGKILL). */
const KILL_GRACE_MS = 2000;

/** Runs one agent process for one client: bytes are bridged both ways, each ends the other. */
function bridge(stream: Duplex, info: RemoteClientInfo, command: readonly string[], agents: Set<Promise<void>>): void {
  const [program, ...args] = command;
  const child = spawn(program!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const log = (text: string): void => void process.stderr.write(`acp-wire serve: ${info.transport} client ${info.connectionId}: ${text}\n`);
  child.stdin!.on('error', () => {});
  stream.on('error', (error) => log(`connection failed: ${error.message}`));
  stream.pipe(child.stdin!);
  child.stdout!.pipe(stream);
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      log(`the agent could not be started: ${error.message}`);
      stream.destroy(error);
      resolve();
    });
    child.once('exit', (code, signal) => {
      if (code !== 0) log(`the agent ${signal ? `was killed by ${signal}` : `exited with code ${code}`}`);
      resolve();
    });
  });
  // The client is gone: its agent's stdin has ended; make sure the agent goes too.
  stream.once('close', () => reap(child, exited));
  const tracked = exited.then(() => void agents.delete(tracked));
  agents.add(tracked);
}

function reap(child: ChildProcess, exited: Promise<void>): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin!.end();
  const term = setTimeout(() => {
    child.kill('SIGTERM');
    kill.refresh();
  }, KILL_GRACE_MS);
  const kill = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS * 2);
  void exited.then(() => {
    clearTimeout(term);
    clearTimeout(kill);
  });
}

/**
 * Runs `acp-wire serve`: listens, prints `listening ws://…`, and serves until SIGINT or SIGTERM.
 *
 * @returns the exit code
 */
export async function runServe(argv: readonly string[]): Promise<number> {
  const args = parseServeArgs(argv);
  if (args === 'help') {
    process.stdout.write(`${SERVE_USAGE}\n`);
    return 0;
  }
  const agents = new Set<Promise<void>>();
  const token = process.env.ACP_WIRE_TOKEN || undefined;
  const listener: RemoteListener = await listenRemoteStreams(
    { host: args.host, port: args.port, path: args.path, allowedOrigins: args.allowedOrigins, token },
    (stream, info) => bridge(stream, info, args.command, agents),
  );
  process.stdout.write(`listening ${listener.url}\n`);
  process.stderr.write(`acp-wire serve: Streamable HTTP at ${listener.httpUrl}${token ? ' (bearer token required)' : ''}\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  await listener.close();
  await Promise.all(agents);
  return signal === 'SIGINT' ? 130 : 143;
}
