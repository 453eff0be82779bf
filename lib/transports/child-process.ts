/**
 * A connection to a child process over its stdin/stdout.
 *
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Connection, type ConnectionOptions } from '../connection/connection';
import { closeConnection } from '../connection/connection-hooks';
import { HAS_PROCESS_GROUPS, ProcessGroup } from './process-tree';

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
  const tree = spawnProcessTree(command, args, options);
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

/** A spawned child in a process group of its own (outside Windows), and its exit. @internal */
export interface ProcessTree {
  /** The child, with piped stdin and stdout. */
  readonly child: ChildProcess;
  /** Resolves once the child has exited, or could not be started. Never rejects. */
  readonly exited: Promise<ChildExit>;
  /**
   * Ends the tree: waits `killTimeoutMs` for the child to exit (its stdin is the caller's to
   * end), then SIGTERMs its group, then SIGKILLs it as long again; once the child has exited,
   * ends what is left of its group the same way. Resolves with the child's exit. Idempotent.
   */
  end(killTimeoutMs: number): Promise<ChildExit>;
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
 * Spawns `command` (no shell) with piped stdin and stdout, in a process group (and session) of its
 * own outside Windows, so that {@link ProcessTree.end} ends everything it starts. @internal
 */
export function spawnProcessTree(
  command: string,
  args: readonly string[],
  options: Pick<SpawnConnectionOptions, 'cwd' | 'env' | 'stderr'> = {},
): ProcessTree {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'],
    detached: HAS_PROCESS_GROUPS,
  });
  const group = HAS_PROCESS_GROUPS && child.pid !== undefined ? new ProcessGroup(child.pid) : undefined;
  const exited = new Promise<ChildExit>((resolve) => {
    child.once('error', (error) => {
      group?.release();
      resolve({ code: null, signal: null, error });
    });
    child.once('exit', (code, signal) => {
      // Nothing of the tree left: no reason to signal the group when this process exits.
      if (group && !group.signal(0)) group.release();
      resolve({ code, signal });
    });
  });
  let ending: Promise<ChildExit> | undefined;
  const end = (killTimeout: number): Promise<ChildExit> => (ending ??= endTree(child, exited, group, killTimeout));
  return { child, exited, end };
}

async function endTree(
  child: ChildProcess,
  exited: Promise<ChildExit>,
  group: ProcessGroup | undefined,
  killTimeout: number,
): Promise<ChildExit> {
  try {
    const exit = await reapChild(child, exited, group, killTimeout);
    if (group) await reapGroup(group, killTimeout);
    return exit;
  } finally {
    group?.release();
  }
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

/** Waits `killTimeout` for the child to exit, then SIGTERMs its tree, then SIGKILLs it as long again. */
async function reapChild(
  child: ChildProcess,
  exited: Promise<ChildExit>,
  group: ProcessGroup | undefined,
  killTimeout: number,
): Promise<ChildExit> {
  const kill = (signal: NodeJS.Signals): void => void (group ? group.signal(signal) : child.kill(signal));
  let timer: NodeJS.Timeout | undefined;
  const escalate = (signal: NodeJS.Signals, next?: NodeJS.Signals): void => {
    timer = setTimeout(() => {
      kill(signal);
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

/**
 * Once the child has exited, ends what is left of its group (say, the binary a wrapper script
 * launched): SIGTERM, then SIGKILL if some of it still runs after `killTimeout`.
 */
async function reapGroup(group: ProcessGroup, killTimeout: number): Promise<void> {
  if (!(await group.hasLiveMembers())) return;
  group.signal('SIGTERM');
  if (await group.waitUntilEmpty(killTimeout)) return;
  group.signal('SIGKILL');
  await group.waitUntilEmpty(killTimeout);
}
