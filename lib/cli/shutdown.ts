/**
 * How the command line stops on SIGINT/SIGTERM: the chains (or served agents) are closed, and the
 * process exits within a bound even if a close hangs.
 *
 * @packageDocumentation
 */
import type { ChildProcess } from 'node:child_process';
import { lastResortKillMs } from '../chain/chain-component';
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
  /** The components' kill timeout (`--kill-timeout`); also the SIGINT grace period. */
  killTimeoutMs: number;
  /**
   * How much longer the orderly stop may take after each first signal, before the deadline forces
   * it (e.g. `serve`'s drain after SIGTERM). Default none.
   */
  graceMs?: Partial<Record<StopSignal, number>>;
  /**
   * Whether the client is still connected, for a command that serves one client on its own stdio.
   * When it is at the first SIGINT, the stop waits up to `killTimeoutMs` for the client to end by
   * itself (see {@link watchStopSignals}).
   */
  isClientConnected?(): boolean;
}

/** The signal handlers of {@link watchStopSignals}. */
export interface StopSignals {
  /** The first stop signal received, if any. */
  readonly signal: StopSignal | undefined;
  /** Removes the handlers and the pending timers. */
  dispose(): void;
}

/**
 * On SIGINT/SIGTERM, calls `target.stop()` and sets a deadline; on a further signal, or if the
 * process is still running at the deadline, forces the stop: every process still running gets
 * SIGKILL, and the process exits with 130/143 once they are gone (one second at most).
 *
 * @remarks
 * - A first SIGINT while `target.isClientConnected()` is true does not stop at once: a Ctrl-C in a
 *   terminal reaches the client's whole process group, and a client that runs this command as its
 *   agent (acpx does) then cancels its turn through the chain and ends the chain's stdin itself.
 *   The chain keeps routing for up to `killTimeoutMs`; then the stop begins. A second SIGINT, or a
 *   SIGTERM, begins it at once.
 * - The deadline is the components' own last-resort kill time plus one second (plus
 *   `target.graceMs` for the signal) after the stop began, so it only fires when something other than a component hangs (e.g. a client that
 *   stopped reading).
 */
export function watchStopSignals(target: StopTarget): StopSignals {
  let signal: StopSignal | undefined;
  let grace: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  const beginStop = (): void => {
    clearTimeout(grace);
    const graceMs = target.graceMs?.[signal!] ?? 0;
    // setTimeout fires at once for a delay beyond 2^31 - 1 ms.
    const delayMs = Math.min(lastResortKillMs(target.killTimeoutMs) + 1000 + graceMs, 2 ** 31 - 1);
    deadline = setTimeout(() => void forceStop(target, signal!), delayMs);
    deadline.unref();
    target.stop();
  };
  const onSignal = (received: StopSignal): void => {
    if (deadline !== undefined) return void forceStop(target, signal!);
    if (signal !== undefined) return beginStop();
    signal = received;
    if (received === 'SIGINT' && target.isClientConnected?.() === true && target.killTimeoutMs > 0) {
      grace = setTimeout(beginStop, target.killTimeoutMs);
    } else {
      beginStop();
    }
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
      clearTimeout(grace);
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
