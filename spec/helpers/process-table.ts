/**
 * What runs on this machine, read from Linux `/proc`: whether a pid runs, the children and the
 * descendants of a process, and waits for processes that are not our children to end. A zombie
 * (ended, never reaped: PID 1 does not reap orphans in some containers) does not run.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** A running process as `/proc/<pid>/stat` shows it. */
export interface LiveProcess {
  readonly pid: number;
  readonly ppid: number;
}

interface Stat {
  state: string;
  ppid: number;
}

function readStat(pid: number | string): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // it ended while we looked
  }
  // "pid (comm) state ppid …": comm may hold spaces, so read after the last ')'.
  const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: state!, ppid: Number(ppid) };
}

function isLive(stat: Stat | undefined): stat is Stat {
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Whether process `pid` exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  return isLive(readStat(pid));
}

/**
 * Whether a process with this pid exists at all, a zombie included (`kill(pid, 0)`): stricter than
 * {@link isRunning} for a child, which exists until its parent has reaped it.
 */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process running now (zombies excluded). */
export function liveProcesses(): LiveProcess[] {
  const found: LiveProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (isLive(stat)) found.push({ pid: Number(entry), ppid: stat.ppid });
  }
  return found;
}

/** The running descendants of `pid` (children, their children, …). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const { pid: child, ppid } of liveProcesses()) children.set(ppid, [...(children.get(ppid) ?? []), child]);
  const found: number[] = [];
  const visit = (parent: number): void => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** The running children of process `pid`, with their command lines. */
export function childProcesses(pid: number): { pid: number; command: string }[] {
  return liveProcesses().flatMap((live) => {
    if (live.ppid !== pid) return [];
    try {
      return [{ pid: live.pid, command: readFileSync(`/proc/${live.pid}/cmdline`, 'utf8').split('\0').join(' ').trim() }];
    } catch {
      return []; // it ended while we looked
    }
  });
}

/**
 * Resolves once none of `pids` runs. No event tells when a process that is not our child ends, so
 * this polls; the test's timeout bounds it.
 */
export async function processesEnded(pids: readonly number[]): Promise<void> {
  while (pids.some(isRunning)) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * The pids of `pids` still running once all have ended or `graceMs` has passed (polling, as
 * {@link processesEnded}): for an assertion that a program's helpers end soon after it does.
 */
export async function stillRunningAfter(pids: readonly number[], graceMs: number): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  while (pids.some(isRunning) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return pids.filter(isRunning);
}
