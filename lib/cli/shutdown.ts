/**
 * How the command line stops on SIGINT/SIGTERM: the chains are closed, and the process exits
 * within a bound even if a close hangs.
 *
 * @packageDocumentation
 */
import { lastResortKillMs } from '../acp/chain-component';
import type { Conductor } from '../acp/conductor';
import { report } from './subcommand';

/** The signals that stop the command line, and its exit code after each (128 + the signal number). */
export const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;

/** SIGINT or SIGTERM. */
export type StopSignal = keyof typeof STOP_SIGNALS;

/** What {@link watchStopSignals} needs to know about the command it stops. */
export interface StopTarget {
  /** The subcommand's name, for the stderr line of a forced stop. */
  command: string;
  /** Begins the orderly stop (closes the chains); the command then returns its exit code. */
  stop(): void;
  /** The chains whose components a forced stop kills. */
  chains(): Iterable<Conductor>;
  /** The components' kill timeout (`--kill-timeout`). */
  killTimeoutMs: number;
}

/** The signal handlers of {@link watchStopSignals}. */
export interface StopSignals {
  /** The first stop signal received, if any. */
  readonly signal: StopSignal | undefined;
  /** Removes the handlers and the pending deadline. */
  dispose(): void;
}

/**
 * On the first SIGINT/SIGTERM, calls `target.stop()` and sets a deadline; on a second signal, or
 * if the process is still running at the deadline, forces the stop: every component process still
 * running gets SIGKILL, and the process exits with 130/143 once they are gone (one second at most).
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

/** Kills every component still running with SIGKILL, waits (one second at most) for them, and exits. */
async function forceStop(target: StopTarget, signal: StopSignal): Promise<never> {
  const running = [...target.chains()].flatMap((chain) => chain.components).filter((c) => c.child?.exitCode === null && c.child.signalCode === null);
  report(target.command, `the chain did not stop in time: killing ${running.map((c) => c.name).join(', ') || 'nothing'} with SIGKILL`);
  for (const component of running) component.child!.kill('SIGKILL');
  const gone = Promise.all(running.map((component) => component.exited));
  await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  // Exiting explicitly: what hung (a pipe nobody reads, a socket) would keep the event loop alive.
  process.exit(STOP_SIGNALS[signal]);
}
