/**
 * A connection to a child process over its stdin/stdout.
 *
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Connection, type ConnectionOptions } from '../connection';
import { closeConnection } from '../connection-hooks';

/** Options of {@link spawnConnection}. */
export interface SpawnConnectionOptions extends ConnectionOptions {
  /** The child's stderr: passed through to ours (`inherit`, default), captured (`pipe`), or `ignore`d. */
  stderr?: 'inherit' | 'pipe' | 'ignore';
  /** Working directory of the child. */
  cwd?: string;
  /** Environment of the child. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** After `close()`, how long to wait for the child to exit before SIGTERM (then SIGKILL as long again). Default 2000 ms. */
  killTimeoutMs?: number;
}

/** How a child process ended. */
export interface ChildExit {
  /** The exit code, or `null` if it was ended by a signal or never started. */
  code: number | null;
  /** The signal that ended it, or `null`. */
  signal: NodeJS.Signals | null;
  /** The spawn error, when the child could not be started. */
  error?: Error;
}

/** A child process and the connection over its stdio. */
export interface ChildConnection {
  /** The connection; closes when the child's stdout ends or the child exits. */
  readonly connection: Connection;
  /** The child process; its stderr is readable when `stderr: 'pipe'`. */
  readonly child: ChildProcess;
  /** Resolves once the child has exited (never rejects). */
  readonly exited: Promise<ChildExit>;
  /** Closes the connection (ending the child's stdin) and resolves once the child has exited, killing it if it lingers. */
  close(): Promise<ChildExit>;
  /** Same as {@link ChildConnection.close}, for `await using child = spawnConnection(…)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Spawns `command` with `args` (no shell) and connects to it over its stdin/stdout.
 *
 * @remarks
 * The end of the child's stdout, the child's exit (once its stdio has closed), or a failure to
 * start it closes the connection: pending requests reject with `ConnectionClosedError`. The child's stderr never mixes with the protocol.
 * @throws RangeError if `killTimeoutMs` is invalid
 * @example
 * ```ts
 * const { connection, close } = spawnConnection(process.execPath, ['dist/examples/conformance-agent.js']);
 * console.log(await connection.sendRequest('initialize', { protocolVersion: 2 }));
 * await close();
 * ```
 */
export function spawnConnection(command: string, args: readonly string[] = [], options: SpawnConnectionOptions = {}): ChildConnection {
  const killTimeout = options.killTimeoutMs ?? 2000;
  if (!(typeof killTimeout === 'number' && killTimeout >= 0 && Number.isFinite(killTimeout))) {
    throw new RangeError('killTimeoutMs must be a non-negative number of milliseconds');
  }
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'],
  });
  const connection = new Connection(child.stdout!, child.stdin!, options);
  const exited = new Promise<ChildExit>((resolve) => {
    child.once('error', (error) => {
      void closeConnection(connection, 'peer exited', error);
      resolve({ code: null, signal: null, error });
    });
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // 'close' comes after the child's stdio has ended: an answer written just before exiting is
    // still read. (Usually stdout's end has closed the connection already.)
    child.once('close', () => void closeConnection(connection, 'peer exited'));
  });
  const close = async (): Promise<ChildExit> => {
    await connection.close();
    return reap(child, exited, killTimeout);
  };
  return { connection, child, exited, close, [Symbol.asyncDispose]: async () => void (await close()) };
}

async function reap(child: ChildProcess, exited: Promise<ChildExit>, killTimeout: number): Promise<ChildExit> {
  let timer: NodeJS.Timeout | undefined;
  const escalate = (signal: NodeJS.Signals, next?: NodeJS.Signals): void => {
    timer = setTimeout(() => {
      child.kill(signal);
      if (next) escalate(next);
    }, killTimeout);
  };
  if (child.exitCode === null && child.signalCode === null) escalate('SIGTERM', 'SIGKILL');
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
