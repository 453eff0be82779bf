/**
 * Bounds how long a dropped responder waits for the garbage collector in an otherwise idle process.
 *
 * @packageDocumentation
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Options of {@link configureIdleCollection}. */
export interface IdleCollectionOptions {
  /** Force collections while drops are possible. Default `true`. */
  enabled?: boolean;
  /** The first delay after a drop becomes possible, in ms. Default 1000. */
  initialDelayMs?: number;
  /** The longest delay between two forced collections, in ms. Default 8000. */
  maxDelayMs?: number;
}

let enabled = true;
let initialDelay = 1000;
let maxDelay = 8000;
/** Requests holding the collector open (see {@link idleCollector}). */
let held = 0;
let delay = initialDelay;
let timer: NodeJS.Timeout | undefined;
let collect: (() => void) | undefined;

/**
 * Configures the idle collector that every connection shares.
 *
 * @remarks
 * A responder dropped without an answer is only noticed when V8 collects it, and an idle process
 * may not collect for minutes. While at least one request's handler has returned without
 * answering (so a drop is possible), acp-wire forces a full collection after `initialDelayMs`,
 * then at doubling intervals up to `maxDelayMs`, and stops as soon as no such request is left.
 * The timer is unref'd: it never keeps a process alive. Forcing needs `gc`, which acp-wire
 * enables at run time (`v8.setFlagsFromString('--expose-gc')`) the first time it is needed.
 * Disable it when the application manages collections itself; automatic answers then depend on
 * natural collections.
 *
 * @throws RangeError if a delay is not a positive number or `initialDelayMs > maxDelayMs`
 */
export function configureIdleCollection(options: IdleCollectionOptions): void {
  const nextInitial = options.initialDelayMs ?? initialDelay;
  const nextMax = options.maxDelayMs ?? maxDelay;
  for (const [name, value] of [['initialDelayMs', nextInitial], ['maxDelayMs', nextMax]] as const) {
    if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
      throw new RangeError(`${name} must be a positive number of milliseconds`);
    }
  }
  if (nextInitial > nextMax) throw new RangeError('initialDelayMs must not exceed maxDelayMs');
  enabled = options.enabled ?? enabled;
  initialDelay = nextInitial;
  maxDelay = nextMax;
  if (timer) {
    clearTimeout(timer);
    timer = undefined;
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
    }
  },
};

function schedule(): void {
  if (!enabled || held === 0 || timer) return;
  timer = setTimeout(tick, delay);
  timer.unref();
}

function tick(): void {
  timer = undefined;
  forceCollection();
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
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
