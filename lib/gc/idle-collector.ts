/**
 * Bounds how long a dropped responder waits for the garbage collector in an otherwise idle process.
 *
 * @packageDocumentation
 */
import type * as V8Module from 'node:v8';
import type * as VmModule from 'node:vm';

// `node:v8` and `node:vm` are loaded when a collection is first forced, and the global
// `performance` read when one is first scheduled: every process with a connection loads this
// module, most never force a collection, and Node compiles those modules (and perf_hooks) on
// first load.

/** Options of {@link configureIdleCollection}. */
export interface IdleCollectionOptions {
  /** Force collections while drops are possible. Default `true`. */
  enabled?: boolean;
  /** The first delay after a drop becomes possible, in ms. Default 1000. */
  initialDelayMs?: number;
  /** The longest delay between two forced collections, in ms, unless the duty cycle asks for more. Default 8000. */
  maxDelayMs?: number;
  /**
   * The largest share of wall-clock time forced collections may take, from 0 (exclusive) to 1.
   * Default 0.01 (1%): after a collection that stalled the process `d` ms, the next one waits at
   * least `d / maxDutyCycle - d` ms (`d` is the collection's CPU time when that is less, so that a
   * busy machine does not stretch the wait).
   */
  maxDutyCycle?: number;
}

/** What the idle collector has done since the process started (for measurements and tests). @internal */
export interface IdleCollectorStats {
  /** Forced collections so far. */
  collections: number;
  /** Their total duration (the process was stalled that long), in ms. */
  totalMs: number;
  /** The duration of the last one, in ms. */
  lastMs: number;
  /** The cost the duty cycle counted for the last one: its duration, or its CPU time if less, in ms. */
  lastCostMs: number;
  /** The delay of the collection scheduled now, in ms, or `undefined` when none is scheduled. */
  scheduledDelayMs: number | undefined;
}

let enabled = true;
let initialDelay = 1000;
let maxDelay = 8000;
let maxDutyCycle = 0.01;
/** Requests holding the collector open (see {@link idleCollector}). */
let held = 0;
let delay = initialDelay;
let timer: NodeJS.Timeout | undefined;
/** `performance.now()` before which no collection is forced (the duty cycle). */
let notBefore = 0;
let collect: (() => void) | undefined;
const stats: IdleCollectorStats = { collections: 0, totalMs: 0, lastMs: 0, lastCostMs: 0, scheduledDelayMs: undefined };

/**
 * Configures the idle collector that every connection shares.
 *
 * @remarks
 * A responder dropped without an answer is only noticed when V8 collects it, and an idle process
 * may not collect for minutes. While at least one request's handler has returned without
 * answering (so a drop is possible), acp-wire forces a full collection after `initialDelayMs`,
 * then at doubling intervals up to `maxDelayMs`, and stops as soon as no such request is left.
 * Each collection is timed, and the next one waits long enough that forced collections take at
 * most `maxDutyCycle` of wall-clock time: on a small heap (a few ms per collection) the schedule
 * above holds, so a drop is answered within `maxDelayMs` plus one collection; on a big heap the
 * interval grows with the cost (a 300 ms collection: the next one at least 29.7 s later), so a peer
 * that keeps one request open cannot make the process spend more than 1% of its time collecting.
 * The timer is unref'd: it never keeps a process alive. Forcing needs `gc`, which acp-wire
 * enables at run time (`v8.setFlagsFromString('--expose-gc')`) the first time it is needed.
 * Disable it when the application manages collections itself; automatic answers then depend on
 * natural collections. Calling this function restarts the schedule at `initialDelayMs` and forgets
 * the duty cycle's wait.
 *
 * @throws RangeError if a delay is not a positive number, `initialDelayMs > maxDelayMs`, or
 * `maxDutyCycle` is not in (0, 1]
 */
export function configureIdleCollection(options: IdleCollectionOptions): void {
  const nextInitial = options.initialDelayMs ?? initialDelay;
  const nextMax = options.maxDelayMs ?? maxDelay;
  const nextDutyCycle = options.maxDutyCycle ?? maxDutyCycle;
  for (const [name, value] of [
    ['initialDelayMs', nextInitial],
    ['maxDelayMs', nextMax],
  ] as const) {
    if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
      throw new RangeError(`${name} must be a positive number of milliseconds`);
    }
  }
  if (nextInitial > nextMax) throw new RangeError('initialDelayMs must not exceed maxDelayMs');
  if (!(typeof nextDutyCycle === 'number' && nextDutyCycle > 0 && nextDutyCycle <= 1)) {
    throw new RangeError('maxDutyCycle must be a number greater than 0 and at most 1');
  }
  enabled = options.enabled ?? enabled;
  initialDelay = nextInitial;
  maxDelay = nextMax;
  maxDutyCycle = nextDutyCycle;
  notBefore = 0;
  if (timer) {
    clearTimeout(timer);
    timer = undefined;
    stats.scheduledDelayMs = undefined;
    delay = initialDelay;
    schedule();
  }
}

/**
 * The connections' side of the idle collector: each request whose handler returned without
 * answering holds it open (forced collections keep running) until the request is answered, handed
 * off or abandoned, and then releases it, exactly once.
 *
 * @internal
 */
export const idleCollector = {
  /** One more request whose responder may be dropped: collections are forced while any is held. */
  holdOpen(): void {
    held++;
    if (held === 1) {
      delay = initialDelay;
      schedule();
    }
  },

  /** One such request fewer; forced collections stop when none is left. */
  release(): void {
    held--;
    if (held === 0 && timer) {
      clearTimeout(timer);
      timer = undefined;
      stats.scheduledDelayMs = undefined;
    }
  },
};

/** A copy of what the idle collector has done so far. @internal */
export function idleCollectorStats(): IdleCollectorStats {
  return { ...stats };
}

/**
 * How long after a forced collection that took `lastMs` the next one may start, so that forced
 * collections take at most `maxDutyCycle` of wall-clock time: `lastMs / maxDutyCycle - lastMs`.
 *
 * @internal
 */
export function dutyCycleWait(lastMs: number, dutyCycle: number): number {
  return lastMs / dutyCycle - lastMs;
}

function schedule(): void {
  if (!enabled || held === 0 || timer) return;
  // The duty cycle holds across holds: a peer that opens and answers requests in turn does not
  // restart the schedule at `initialDelayMs` right after a costly collection.
  const ms = Math.max(delay, notBefore - performance.now());
  timer = setTimeout(tick, ms);
  timer.unref();
  stats.scheduledDelayMs = ms;
}

function tick(): void {
  timer = undefined;
  stats.scheduledDelayMs = undefined;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  forceCollection();
  const ended = performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  const lastMs = ended - started;
  // On a busy machine the wall-clock time also counts the time other processes ran: the
  // collection's own cost is at most its CPU time.
  const costMs = Math.min(lastMs, (cpu.user + cpu.system) / 1000);
  stats.collections++;
  stats.totalMs += lastMs;
  stats.lastMs = lastMs;
  stats.lastCostMs = costMs;
  notBefore = ended + dutyCycleWait(costMs, maxDutyCycle);
  delay = Math.min(delay * 2, maxDelay);
  // Finalizers run in a later macrotask; the hold count they change is read at the next tick.
  schedule();
}

/**
 * Runs a full garbage collection now (finalizers run in a later macrotask).
 *
 * @remarks Uses `globalThis.gc` when the process was started with `--expose-gc`, else enables it
 * at run time.
 */
function forceCollection(): void {
  collect ??= resolveGc();
  collect();
}

function resolveGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  (require('node:v8') as typeof V8Module).setFlagsFromString('--expose-gc');
  return (require('node:vm') as typeof VmModule).runInNewContext('gc') as () => void;
}
