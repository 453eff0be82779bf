/**
 * The process tree a spawned child starts: spawning it in a process group of its own, how to tell
 * whether any of it still runs, how to signal and end all of it, and a last-resort signal when
 * this process exits. Loads nothing of the library, so a program can spawn before loading it.
 *
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';

/** Whether children get a process group of their own that can be signalled as a whole (not on Windows). @internal */
export const HAS_PROCESS_GROUPS = process.platform !== 'win32';

/** Polling interval while waiting for members of a group that are not our children (no event tells us they ended). */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;

/**
 * The process group of a child spawned with `detached: true` (its own session and group, whose id
 * is the child's pid): the child, and everything it starts that does not leave the group (a wrapper
 * script and the binary it launched, `npx …`, `sh -c …`).
 *
 * @internal
 */
export class ProcessGroup {
  /** The group id (the pid of the child that leads it). */
  readonly pgid: number;
  #isReleased = false;

  constructor(pgid: number) {
    this.pgid = pgid;
    owned.add(this);
    if (owned.size === 1) process.on('exit', signalOwnedGroups);
  }

  /** Sends `signal` to every process of the group (0: none, just check). Returns false if the group has no process left. */
  signal(signal: NodeJS.Signals | 0): boolean {
    try {
      process.kill(-this.pgid, signal);
      return true;
    } catch {
      // ESRCH: nothing left in the group. (EPERM cannot happen for a group we started.)
      return false;
    }
  }

  /** Whether a process of the group is still running (zombies, dead but unreaped, do not count). */
  async hasLiveMembers(): Promise<boolean> {
    if (!this.signal(0)) return false;
    // A group whose members are all zombies still accepts signals. Where nobody reaps orphans (PID 1
    // in some containers), that lasts forever: on Linux, look at each process's state instead.
    if (process.platform !== 'linux') return true;
    return hasLiveMemberInProc(this.pgid);
  }

  /** Resolves true once no process of the group runs, or false after `timeoutMs`. */
  async waitUntilEmpty(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    let pause = FIRST_POLL_MS;
    for (;;) {
      if (!(await this.hasLiveMembers())) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      pause = Math.min(pause * 2, MAX_POLL_MS);
    }
  }

  /** Forgets the group: it is no longer signalled when this process exits. Idempotent. */
  release(): void {
    if (this.#isReleased) return;
    this.#isReleased = true;
    owned.delete(this);
    if (owned.size === 0) process.removeListener('exit', signalOwnedGroups);
  }
}

/** Groups started and not yet released: signalled if this process exits without closing them. */
const owned = new Set<ProcessGroup>();

/**
 * On `process.exit()`, a normal end or an uncaught exception, SIGTERM every group not yet released.
 * (Only synchronous work is possible here. A SIGKILL of this process, or a signal it does not
 * handle, skips it: the children then see only the end of their stdin.)
 */
function signalOwnedGroups(): void {
  for (const group of owned) group.signal('SIGTERM');
}

async function hasLiveMemberInProc(pgid: number): Promise<boolean> {
  let entries: string[];
  try {
    entries = await fs.readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!isPid(entry)) continue;
    let stat: string;
    try {
      stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}

function isPid(name: string): boolean {
  const first = name.charCodeAt(0);
  return first >= 48 && first <= 57;
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

/** A spawned child in a process group of its own (outside Windows), and its exit. @internal */
export interface ProcessTree {
  /** The child, with piped stdin and stdout. */
  readonly child: ChildProcess;
  /** Resolves once the child has exited, or could not be started. Never rejects. */
  readonly exited: Promise<ChildExit>;
  /** The child's process group (outside Windows, once started): what else of the tree still runs. */
  readonly group: ProcessGroup | undefined;
  /**
   * Ends the tree: waits `killTimeoutMs` for the child to exit (its stdin is the caller's to
   * end), then SIGTERMs its group, then SIGKILLs it as long again; once the child has exited,
   * ends what is left of its group the same way. Resolves with the child's exit. Idempotent.
   */
  end(killTimeoutMs: number): Promise<ChildExit>;
}

/** How {@link spawnProcessTree} starts a child: its directory, environment and stderr. @internal */
export interface ProcessTreeOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  stderr?: 'inherit' | 'pipe' | 'ignore';
}

/**
 * Spawns `command` (no shell) with piped stdin and stdout, in a process group (and session) of its
 * own outside Windows, so that {@link ProcessTree.end} ends everything it starts. @internal
 */
export function spawnProcessTree(command: string, args: readonly string[], options: ProcessTreeOptions = {}): ProcessTree {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'],
    detached: HAS_PROCESS_GROUPS,
  });
  return treeOf(child);
}

/**
 * A process tree spawned before what talks to it is loaded ({@link spawnEarly}), with the default
 * options: this process's directory and environment, stderr passed through. @internal
 */
export interface EarlyProcessTree {
  /** The program spawned. */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** Hands the tree over, once: a spawn that failed emits its `'error'` again for the taker's listeners. */
  take(): ProcessTree;
  /** Ends a tree nobody took (its stdin, then {@link ProcessTree.end}); nothing once it is taken. */
  discard(killTimeoutMs: number): Promise<void>;
}

/**
 * Spawns `command` now, with the default options, for a caller that knows what it will run before
 * it has loaded what talks to the child (`acp-wire conduct`): the child starts while the caller
 * loads, and the caller hands the tree to whatever connects to it (a conductor's `spawned`). @internal
 */
export function spawnEarly(command: string, args: readonly string[]): EarlyProcessTree {
  const tree = spawnProcessTree(command, args);
  // A spawn that fails emits 'error' on the next tick, before the tree is taken: the error is kept
  // and emitted again once it is, for the listeners of the taker, as if it had spawned the child.
  let failure: Error | undefined;
  const keep = (error: Error): void => void (failure = error);
  tree.child.once('error', keep);
  let isTaken = false;
  const take = (): ProcessTree => {
    if (isTaken) throw new Error(`the early process of ${command} was taken already`);
    isTaken = true;
    tree.child.off('error', keep);
    const { child } = tree;
    if (failure) process.nextTick(() => child.listenerCount('error') > 0 && child.emit('error', failure));
    return tree;
  };
  const discard = async (killTimeoutMs: number): Promise<void> => {
    if (isTaken) return;
    isTaken = true;
    tree.child.stdin?.end();
    await tree.end(killTimeoutMs);
  };
  return { command, args, take, discard };
}

/** The tree of a child just spawned: its group, its exit, and how to end it. */
function treeOf(child: ChildProcess): ProcessTree {
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
  return { child, exited, group, end };
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
