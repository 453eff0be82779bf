/**
 * A connection to a child process over its stdin/stdout.
 *
 * @packageDocumentation
 */
import type { ChildProcess } from 'node:child_process';
import { Connection, type ConnectionOptions } from '../connection/connection';
import { closeConnection } from '../connection/connection-hooks';
import { spawnProcessTree, type ChildExit, type ProcessTree } from './process-tree';

export type { ChildExit };

/** Options of {@link spawnConnection}. */
export interface SpawnConnectionOptions extends ConnectionOptions {
  /** The child's stderr: passed through to ours (`inherit`, default), captured (`pipe`), or `ignore`d. */
  stderr?: 'inherit' | 'pipe' | 'ignore';
  /** Working directory of the child. */
  cwd?: string;
  /** Environment of the child. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /**
   * After `close()`, how long to wait for the child to exit before SIGTERM to its process tree
   * (then SIGKILL as long again). Default 2000 ms.
   */
  killTimeoutMs?: number;
}

/** A child process and the connection over its stdio. */
export interface ChildConnection {
  /** The connection; closes when the child's stdout ends or the child exits. */
  readonly connection: Connection;
  /** The child process; its stderr is readable when `stderr: 'pipe'`. */
  readonly child: ChildProcess;
  /** Resolves once the child has exited (never rejects). */
  readonly exited: Promise<ChildExit>;
  /**
   * Closes the connection (ending the child's stdin) and resolves with the child's exit once its
   * whole process tree has ended, killing what lingers. Idempotent.
   *
   * @remarks
   * The child has `killTimeoutMs` to exit (counted from the call, even if lines are still queued for
   * a child that does not read its stdin); then its process group gets SIGTERM, and SIGKILL after
   * `killTimeoutMs` more. Once the child has exited, whatever still runs in its group (the binary a
   * wrapper script launched, a background job of `sh -c`) gets SIGTERM, then SIGKILL after
   * `killTimeoutMs`.
   */
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
 *
 * Outside Windows the child runs in a process group (and session) of its own, so that `close()`
 * ends everything it started, not only the child itself. Two consequences: a Ctrl-C in a terminal
 * reaches this process but not the child (close the child on SIGINT, as `acp-wire conduct` does),
 * and a group is not ended by the kernel when this process dies. If this process exits without
 * closing the child (`process.exit()`, an uncaught exception, the end of its work), every group
 * still open gets SIGTERM from an `'exit'` hook; if it is killed outright (SIGKILL, or a signal it
 * does not handle), the child sees only the end of its stdin, and one that ignores it lives on.
 * @throws RangeError if `killTimeoutMs` is invalid
 * @example
 * ```ts
 * const { connection, close } = spawnConnection(process.execPath, ['dist/examples/conformance-agent.js']);
 * console.log(await connection.sendRequest('initialize', { protocolVersion: 2 }));
 * await close();
 * ```
 */
export function spawnConnection(command: string, args: readonly string[] = [], options: SpawnConnectionOptions = {}): ChildConnection {
  const killTimeout = checkKillTimeout(options.killTimeoutMs);
  return connectProcessTree(spawnProcessTree(command, args, options), killTimeout, options);
}

/**
 * {@link spawnConnection} for a process tree spawned already (`spawnEarly`): the connection over
 * its stdio, and how to close it. `killTimeout` is checked by the caller. @internal
 */
export function connectProcessTree(tree: ProcessTree, killTimeout: number, options: ConnectionOptions = {}): ChildConnection {
  const { child, exited } = tree;
  const connection = new Connection(child.stdout!, child.stdin!, options);
  child.once('error', (error) => void closeConnection(connection, 'peer exited', error));
  // 'close' comes after the child's stdio has ended: an answer written just before exiting is
  // still read. (Usually stdout's end has closed the connection already.)
  child.once('close', () => void closeConnection(connection, 'peer exited'));
  let closing: Promise<ChildExit> | undefined;
  const close = (): Promise<ChildExit> => (closing ??= closeChild(connection, tree, killTimeout));
  return { connection, child, exited, close, [Symbol.asyncDispose]: async () => void (await close()) };
}

/** @throws RangeError unless `value` is undefined (2000) or a non-negative finite number. @internal */
export function checkKillTimeout(value: number | undefined): number {
  const killTimeout = value ?? 2000;
  if (!(typeof killTimeout === 'number' && killTimeout >= 0 && Number.isFinite(killTimeout))) {
    throw new RangeError('killTimeoutMs must be a non-negative number of milliseconds');
  }
  return killTimeout;
}

/**
 * Ends the child's stdin, then ends its process tree: the kill escalation starts at once, whatever
 * is still queued for a child that does not read its stdin.
 */
async function closeChild(connection: Connection, tree: ProcessTree, killTimeout: number): Promise<ChildExit> {
  const flushed = connection.close();
  const exit = await tree.end(killTimeout);
  // A process outside the group may still hold the pipe without reading it: stop waiting for it.
  if (!tree.child.stdin!.writableFinished) tree.child.stdin!.destroy();
  await flushed;
  return exit;
}
