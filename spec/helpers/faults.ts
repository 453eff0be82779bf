/**
 * Helpers for the fault and soak specs: the fault peer, stream taps, unhandled-rejection and
 * resource checks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import * as path from 'node:path';
import { Connection, spawnConnection, type ChildConnection, type ConnectionOptions } from '../../lib';
import { TraceChecker } from './trace-checker';

/** The fault peer program (spec/fixtures/fault-peer.ts). */
export const FAULT_PEER = path.join(__dirname, '..', 'fixtures', 'fault-peer.ts');

/** Node arguments that run a TypeScript fixture with `gc` exposed. */
export const TS_NODE_ARGS = ['--expose-gc', '-r', 'ts-node/register/transpile-only'];

/** The repository root. */
export const ROOT = path.join(__dirname, '..', '..');

/** Spawns the fault peer in `mode` and connects to it; its stderr is captured (see {@link collectLines}). */
export function spawnFaultPeer(mode: string, args: readonly string[] = [], options: ConnectionOptions = {}): ChildConnection {
  return spawnConnection(process.execPath, [...TS_NODE_ARGS, FAULT_PEER, mode, ...args], { ...options, stderr: 'pipe', cwd: ROOT });
}

/** Spawns the fault peer in `mode` with plain pipes (the test speaks raw NDJSON to it). */
export function spawnRawFaultPeer(mode: string, args: readonly string[] = []): ChildProcess {
  return spawn(process.execPath, [...TS_NODE_ARGS, FAULT_PEER, mode, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Collects the lines of a text stream; `next(predicate)` resolves with the first matching line. */
export interface LineCollector {
  readonly lines: string[];
  next(predicate: (line: string) => boolean): Promise<string>;
}

/** Starts collecting the lines of `stream` (e.g. a child's stderr). */
export function collectLines(stream: Readable): LineCollector {
  const lines: string[] = [];
  const waiters: { predicate: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.predicate(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  return {
    lines,
    next(predicate) {
      const found = lines.find(predicate);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

/** Resolves once `child` has exited and its stdio streams have closed, with its exit code and signal. */
export function childClosed(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    if (isStdioClosed(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
}

function isStdioClosed(child: ChildProcess): boolean {
  return child.stdio.every((stream) => stream === null || (stream as { closed?: boolean }).closed === true);
}

/** Records every unhandled rejection while installed. */
export class UnhandledRejections {
  readonly reasons: unknown[] = [];
  readonly #listener = (reason: unknown): void => void this.reasons.push(reason);

  /** Starts recording (call in `before`). */
  install(): void {
    process.on('unhandledRejection', this.#listener);
  }

  /** Stops recording (call in `after`). */
  uninstall(): void {
    process.removeListener('unhandledRejection', this.#listener);
  }
}

/** The number of listeners per event name on an emitter, for the given names. */
export function listenerCounts(emitter: NodeJS.EventEmitter, events: readonly string[]): Record<string, number> {
  return Object.fromEntries(events.map((event) => [event, emitter.listenerCount(event)]));
}

/** The events a Connection listens to on its input and output streams. */
export const STREAM_EVENTS = ['data', 'end', 'close', 'error', 'drain', 'finish', 'readable'] as const;

/** Counts of each kind of ref'd handle or request keeping the event loop alive (`process.getActiveResourcesInfo()`). */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

/** The outcome of one request, recorded without ever leaving a rejection unhandled. */
export type Outcome = { status: 'resolved'; value: unknown } | { status: 'rejected'; reason: unknown } | { status: 'pending' };

/** Tracks a request's outcome synchronously readable (a promise's state is not). */
export function track(request: PromiseLike<unknown>): { readonly outcome: Outcome; readonly done: Promise<void> } {
  const state: { outcome: Outcome; done: Promise<void> } = { outcome: { status: 'pending' }, done: Promise.resolve() };
  state.done = Promise.resolve(request).then(
    (value) => void (state.outcome = { status: 'resolved', value }),
    (reason: unknown) => void (state.outcome = { status: 'rejected', reason }),
  );
  return state;
}

/** Two connections over in-memory streams, with taps that feed each side's wire checker. */
export interface TappedPair {
  a: Connection;
  b: Connection;
  /** Wire-level view from `a`'s side (bytes as written on the streams). */
  wireA: TraceChecker;
  /** Wire-level view from `b`'s side. */
  wireB: TraceChecker;
}

/** Like `createConnectionPair`, but taps both streams into wire checkers (`strictOrder: false`). */
export function tappedPair(optionsA: ConnectionOptions, optionsB: ConnectionOptions): TappedPair {
  const aToB = new PassThrough();
  const bToA = new PassThrough();
  const wireA = new TraceChecker({ strictOrder: false });
  const wireB = new TraceChecker({ strictOrder: false });
  tapLines(aToB, (line) => {
    wireA.observe('->', line);
    wireB.observe('<-', line);
  });
  tapLines(bToA, (line) => {
    wireB.observe('->', line);
    wireA.observe('<-', line);
  });
  return { a: new Connection(bToA, aToB, optionsA), b: new Connection(aToB, bToA, optionsB), wireA, wireB };
}

/** Calls `onLine` for every complete line that flows through `stream` (does not change its flow). */
export function tapLines(stream: Readable, onLine: (line: string) => void): void {
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop()!;
    for (const line of parts) if (line !== '') onLine(line);
  });
}

/** The built peers and command line (from `npm run build`). */
export const BUILT = {
  agent: path.join(ROOT, 'dist', 'examples', 'conformance-agent.js'),
  proxy: path.join(ROOT, 'dist', 'examples', 'passthrough-proxy.js'),
  cli: path.join(ROOT, 'dist', 'bin', 'acp-wire.js'),
} as const;

/** Throws a clear error unless the built peers exist (`npm test` builds first). */
export function requireBuilt(): void {
  for (const file of Object.values(BUILT)) {
    if (!existsSync(file)) throw new Error(`${path.relative(ROOT, file)} is missing: run \`npm run build\` first`);
  }
}

/** The pids of the live children of process `pid`, with their command lines (Linux `/proc`). */
export function childProcesses(pid: number): { pid: number; command: string }[] {
  const children: { pid: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command (which is in parentheses and may hold spaces): state, ppid, …
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== pid || state === 'Z') continue;
      children.push({ pid: Number(entry), command: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}
