/**
 * One component of a conductor's chain: a child process over stdio (or an in-process connection),
 * its role and its name.
 *
 * @packageDocumentation
 */
import type { ChildProcess } from 'node:child_process';
import type { Connection } from '../connection/connection';
import type { Logger } from '../support/logger';
import { checkKillTimeout, connectProcessTree, spawnConnection, type ChildConnection, type ChildExit } from '../transports/child-process';
import type { EarlyProcessTree } from '../transports/process-tree';
import { splitCommandLine } from './command-line';

/**
 * What a conductor runs as one component of its chain.
 *
 * @remarks
 * - a string: a command line, split into words as a shell would, without a shell;
 * - `{ command, args }`: a program and its arguments, spawned without a shell;
 * - `{ connection }`: a component already connected (in-process, or over a transport of your own).
 */
export type ComponentSource =
  | string
  | {
      /** The program to run (no shell). */
      command: string;
      /** Its arguments. */
      args?: readonly string[];
      /** Its working directory. Default: this process's. */
      cwd?: string;
      /** Its environment. Default: this process's. */
      env?: NodeJS.ProcessEnv;
      /** The name used in logs and errors. Default: `proxy1`, `proxy2`, …, `agent`. */
      name?: string;
    }
  | {
      /** A connection to a component you started yourself. */
      connection: Connection;
      /** The name used in logs and errors. Default: `proxy1`, `proxy2`, …, `agent`. */
      name?: string;
    };

/** A proxy or the agent (always the last component). */
export type ComponentRole = 'proxy' | 'agent';

/** One running component of a chain. */
export interface ChainComponent {
  /** Position in the chain, from 0 (the client's successor). */
  readonly index: number;
  /** `agent` for the last component, `proxy` for the others. */
  readonly role: ComponentRole;
  /** Short name for logs: `proxy1`, `proxy2`, …, `agent` (unless given). */
  readonly name: string;
  /** What runs: the command line, or the name of an in-process component. */
  readonly description: string;
  /** The conductor's connection to the component. */
  readonly connection: Connection;
  /** The child process, for a spawned component. */
  readonly child: ChildProcess | undefined;
  /** Resolves once the child has exited (`undefined` for an in-process component). Never rejects. */
  readonly exited: Promise<ChildExit | undefined>;
}

/** Options of {@link startComponent}. @internal */
export interface StartOptions {
  index: number;
  role: ComponentRole;
  logger: ((name: string) => Logger) | undefined;
  stderr: 'inherit' | 'pipe' | 'ignore';
  killTimeoutMs: number | undefined;
  /** The component's process, spawned already (checked by {@link checkSpawned}): taken, not spawned again. */
  spawned?: EarlyProcessTree | undefined;
}

/** A started component and how to stop it. @internal */
export interface StartedComponent extends ChainComponent {
  /**
   * Closes the connection and reaps the child (killing it if it lingers); bounded: see
   * {@link lastResortKillMs}.
   */
  close(): Promise<ChildExit | undefined>;
}

/**
 * How long after `close()` a component's process is killed with SIGKILL whatever else happens:
 * twice the kill timeout (the SIGTERM then SIGKILL escalation) plus one second. A child that does
 * not read its stdin can keep the connection from flushing; this bounds the wait anyway. @internal
 */
export function lastResortKillMs(killTimeoutMs = 2000): number {
  return 2 * killTimeoutMs + 1000;
}

/** A component's name unless one is given: `proxy1`, `proxy2`, …, `agent`. @internal */
export function defaultComponentName(index: number, role: ComponentRole): string {
  return role === 'agent' ? 'agent' : `proxy${index + 1}`;
}

/** The program and arguments of a source, checked before anything is started. @internal */
export function resolveSource(source: ComponentSource): ComponentSource {
  if (typeof source === 'string') {
    const [command, ...args] = splitCommandLine(source);
    return { command: command!, args, name: undefined };
  }
  if ('connection' in source) return source;
  if (typeof source.command !== 'string' || source.command === '') throw new TypeError('a component command must be a non-empty string');
  return source;
}

/**
 * Checks that a process spawned already is the one `resolved` (a {@link resolveSource} result)
 * would start: the same program and arguments, with this process's directory and environment and
 * stderr passed through.
 *
 * @throws TypeError if it is not
 * @internal
 */
export function checkSpawned(
  resolved: ComponentSource,
  spawned: EarlyProcessTree | undefined,
  stderr: StartOptions['stderr'],
  index: number,
): void {
  if (spawned === undefined) return;
  const isSame =
    typeof resolved === 'object' &&
    'command' in resolved &&
    resolved.command === spawned.command &&
    JSON.stringify(resolved.args ?? []) === JSON.stringify(spawned.args) &&
    resolved.cwd === undefined &&
    resolved.env === undefined &&
    stderr === 'inherit';
  if (!isSame) throw new TypeError(`the process spawned for component ${index} is not the one it names`);
}

/** Starts one component (spawning its process, if it is a command, unless it was spawned already). @internal */
export function startComponent(source: ComponentSource, description: string, options: StartOptions): StartedComponent {
  const resolved = resolveSource(source);
  const name = (typeof resolved === 'object' && resolved.name) || defaultComponentName(options.index, options.role);
  const logger = options.logger?.(name);
  const base = { index: options.index, role: options.role, name, description };
  if (typeof resolved === 'object' && 'connection' in resolved) {
    const connection = resolved.connection;
    const exited = new Promise<undefined>((resolve) => {
      if (connection.isClosed) resolve(undefined);
      else connection.once('close', () => resolve(undefined));
    });
    return { ...base, connection, child: undefined, exited, close: async () => void (await connection.close()) };
  }
  const spec = resolved as Exclude<ComponentSource, string | { connection: Connection }>;
  const connectionOptions = { name, ...(logger ? { logger } : {}) };
  const spawned = options.spawned
    ? connectProcessTree(options.spawned.take(), checkKillTimeout(options.killTimeoutMs), connectionOptions)
    : spawnConnection(spec.command, spec.args ?? [], {
        cwd: spec.cwd,
        env: spec.env,
        stderr: options.stderr,
        killTimeoutMs: options.killTimeoutMs,
        ...connectionOptions,
      });
  const close = (): Promise<ChildExit> => closeWithin(spawned, lastResortKillMs(options.killTimeoutMs));
  return { ...base, connection: spawned.connection, child: spawned.child, exited: spawned.exited, close };
}

/** `spawned.close()`, or — if it has not resolved after `ms` — SIGKILL and the child's exit. */
async function closeWithin(spawned: ChildConnection, ms: number): Promise<ChildExit> {
  let timer: NodeJS.Timeout | undefined;
  const lastResort = new Promise<ChildExit>((resolve) => {
    timer = setTimeout(() => {
      spawned.child.kill('SIGKILL');
      resolve(spawned.exited);
    }, ms);
  });
  try {
    return await Promise.race([spawned.close(), lastResort]);
  } finally {
    clearTimeout(timer);
  }
}

/** How a component's end reads in a message, e.g. `exited with code 3`. @internal */
export function describeExit(exit: ChildExit | undefined): string {
  if (!exit) return 'closed its connection';
  if (exit.error) return `could not be started (${exit.error.message})`;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${String(exit.code)}`;
}
