/**
 * What runs on this machine, read from Linux `/proc`: whether a pid runs, and the descendants of a
 * process. A zombie (ended, never reaped: PID 1 does not reap orphans in some containers)
 * does not run.
 */
import { readFileSync, readdirSync } from 'node:fs';

interface Stat {
  state: string;
  ppid: number;
  pgrp: number;
}

function readStat(pid: number | string): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces, so read after the last ')'.
  const [state, ppid, pgrp] = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: state!, ppid: Number(ppid), pgrp: Number(pgrp) };
}

function isLive(stat: Stat | undefined): stat is Stat {
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Whether process `pid` exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  return isLive(readStat(pid));
}

/** The running descendants of `pid` (children, their children, …). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (!isLive(stat)) continue;
    const siblings = parents.get(stat.ppid) ?? [];
    siblings.push(Number(entry));
    parents.set(stat.ppid, siblings);
  }
  const found: number[] = [];
  const visit = (parent: number): void => {
    for (const child of parents.get(parent) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
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

/**
 * `node` arguments for a wrapper like a package's launcher script around a native binary: it
 * starts a grandchild that ignores the end of its stdin and shares the wrapper's stdio, writes
 * `grandchild PID` on stderr, and lives as long as the grandchild (exiting with its code).
 */
export const WRAPPER_ARGS: readonly string[] = [
  '-e',
  [
    "const { spawn } = require('node:child_process');",
    "const grandchild = spawn(process.execPath, ['-e', 'process.stderr.write(`grandchild ${process.pid}\\\\n`); setInterval(() => {}, 1e6)'], { stdio: 'inherit' });",
    "grandchild.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));",
  ].join('\n'),
];
