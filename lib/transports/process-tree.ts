/**
 * The process tree a spawned child starts: its process group, how to tell whether any of it still
 * runs, how to signal all of it, and a last-resort signal when this process exits.
 *
 * @packageDocumentation
 */
import { readFile, readdir } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

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
      await delay(Math.min(pause, left));
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
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!isPid(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
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
