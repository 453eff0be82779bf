/**
 * How a process under check ends: waits for its exit, and what of its process group still runs.
 *
 * @packageDocumentation
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { AgentProcess } from './agent-process';

/** Resolves true once the agent has exited, false after `ms`. */
export async function exitsWithin(agent: AgentProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([agent.exited.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The live processes of a process group, as `pid (name)` (Linux `/proc`; elsewhere: none known by name). */
export function groupMembers(pgid: number): string[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    if (!/^[0-9]+$/.test(entry)) return [];
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      return Number(pgrp) === pgid && state !== 'Z' && state !== 'X' ? [`${entry} (${name})`] : [];
    } catch {
      return [];
    }
  });
}
