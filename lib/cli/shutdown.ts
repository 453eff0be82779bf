/**
 * How the command line stops on SIGINT/SIGTERM: the chains (or served agents) are closed, and the
 * process exits within a bound even if a close hangs.
 *
 * @packageDocumentation
 */
import type { ChildProcess } from 'node:child_process';
import { lastResortKillMs } from '../acp/chain-component';
import { report } from './subcommand';

/** The signals that stop the command line, and its exit code after each (128 + the signal number). */
export const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;

/** SIGINT or SIGTERM. */
export type StopSignal = keyof typeof STOP_SIGNALS;

/** A process a forced stop kills: a chain's component, or an agent `serve` runs for a client. */
export interface StoppableProcess {
  /** Its name, for the stderr line of a forced stop. */
  readonly name: string;
  /** The child process (`undefined` for a component that is not a process of ours). */
  readonly child: ChildProcess | undefined;
  /** Resolves once it has exited. */
  readonly exited: Promise<unknown>;
}

/** What {@link watchStopSignals} needs to know about the command it stops. */
export interface StopTarget {
  /** The subcommand's name, for the stderr line of a forced stop. */
  command: string;
  /** Begins the orderly stop (closes the chains); the command then returns its exit code. */
  stop(): void;
  /** The processes a forced stop kills. */
  processes(): Iterable<StoppableProcess>;
  /** The components' kill timeout (`--kill-timeout`). */
  killTimeoutMs: number;
}

/** The signal handlers of {@link watchStopSignals}. */
export interface StopSignals {
  /** The first stop signal received, if any. */
  readonly signal: StopSignal | undefined;
  /** Removes the handlers and the pending timers. */
  dispose(): void;
}

/**
 * On the first SIGINT/SIGTERM, calls `target.stop()` and sets a deadline; on a second signal, or
 * if the process is still running at the deadline, forces the stop: every process still running
 * gets SIGKILL, and the process exits with 130/143 once they are gone (one second at most).
 *
 * @remarks The deadline is the components' own last-resort kill time plus one second, so it only
 * fires when something other than a component hangs (e.g. a client that stopped reading).
 */
export function watchStopSignals(target: StopTarget): StopSignals {
  let signal: StopSignal | undefined;
  let deadline: NodeJS.Timeout | undefined;
  const onSignal = (received: StopSignal): void => {
    if (signal !== undefined) return void forceStop(target, signal);
    signal = received;
    deadline = setTimeout(() => void forceStop(target, received), lastResortKillMs(target.killTimeoutMs) + 1000);
    deadline.unref();
    target.stop();
  };
  const handlers = Object.keys(STOP_SIGNALS).map((name) => {
    const handler = (): void => onSignal(name as StopSignal);
    process.on(name, handler);
    return [name, handler] as const;
  });
  return {
    get signal() {
      return signal;
    },
    dispose() {
      clearTimeout(deadline);
      for (const [name, handler] of handlers) process.removeListener(name, handler);
    },
  };
}

/** Kills every process still running with SIGKILL, waits (one second at most) for them, and exits. */
async function forceStop(target: StopTarget, signal: StopSignal): Promise<never> {
  const running = [...target.processes()].filter((p) => p.child?.exitCode === null && p.child.signalCode === null);
  report(target.command, `did not stop in time: killing ${running.map((p) => p.name).join(', ') || 'nothing'} with SIGKILL`);
  for (const p of running) p.child!.kill('SIGKILL');
  const gone = Promise.all(running.map((p) => p.exited));
  await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  // Exiting explicitly: what hung (a pipe nobody reads, a socket) would keep the event loop alive.
  process.exit(STOP_SIGNALS[signal]);
}
