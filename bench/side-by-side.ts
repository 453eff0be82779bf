/**
 * The side-by-side part of the benchmark: every library over every transport, workloads
 * interleaved per round so that noise falls on all libraries alike.
 *
 * @packageDocumentation
 */
import type { LibraryName } from './adapters';
import type { BenchOptions } from './options';
import { WorkerProcess } from './pool';
import { runsOver, type TransportName } from './transports';
import type { CellResult } from './worker';
import type { WorkloadName } from './workloads';

/** A library as run: acp-wire also runs a second time with tracker registration skipped. */
export interface Variant {
  key: string;
  library: LibraryName;
  env: Record<string, string>;
}

/** The key of acp-wire with its weak-ref trackers switched off. */
export const NO_TRACKER = 'acp-wire (no tracker)';

/**
 * The bench's own environment variable, read by `adapters/acp-wire.ts` in the worker and the
 * servers it starts: `1` switches acp-wire's trackers off through an internal module function.
 */
export const NO_TRACKER_ENV = 'BENCH_ACP_WIRE_NO_TRACKER';

/** Every run of one (transport, workload, variant). */
export interface Cell {
  transport: TransportName;
  workload: WorkloadName;
  variant: string;
  runs: CellResult[];
}

/** Peak RSS of one (variant, transport) worker and its server. */
export interface PeakRss {
  variant: string;
  transport: TransportName;
  clientPeakRssBytes: number;
  serverPeakRssBytes: number | undefined;
}

/** How many runs one (transport, workload, variant) needed to reach its steady state. */
export interface WarmUp {
  transport: TransportName;
  workload: WorkloadName;
  variant: string;
  runs: number;
}

/** What the side-by-side runs produced. */
export interface SideBySide {
  cells: Cell[];
  rss: PeakRss[];
  /** Absent when nothing was warmed up. */
  warmUps?: WarmUp[];
}

function variantsFor(options: BenchOptions, transport: TransportName, workload?: WorkloadName): Variant[] {
  const variants: Variant[] = options.libraries
    .filter((library) => runsOver(library, transport))
    .map((library) => ({ key: library, library, env: {} }));
  const hasWorkload = workload === undefined || options.trackerWorkloads.includes(workload);
  if (options.trackerTransports.includes(transport) && hasWorkload) {
    variants.push({ key: NO_TRACKER, library: 'acp-wire', env: { [NO_TRACKER_ENV]: '1' } });
  }
  return variants;
}

function rotate<T>(items: T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

type Workers = Map<string, { variant: Variant; transport: TransportName; worker: WorkerProcess }>;

async function startWorkers(options: BenchOptions): Promise<Workers> {
  const workers: Workers = new Map();
  for (const transport of options.transports) {
    for (const variant of variantsFor(options, transport)) {
      const worker = new WorkerProcess('worker.js', [variant.library, transport], variant.env);
      workers.set(`${transport}|${variant.key}`, { variant, transport, worker });
    }
  }
  for (const { worker } of workers.values()) await worker.ready();
  return workers;
}

/**
 * Runs one warm-up round (discarded; each cell runs until its CPU time per operation is steady)
 * and `options.rounds` measured rounds; each round runs every workload on every transport for
 * every variant, in an order rotated by the round.
 */
export async function runSideBySide(options: BenchOptions, progress: (line: string) => void): Promise<SideBySide> {
  const workers = await startWorkers(options);
  const cells = new Map<string, Cell>();
  const warmUps: WarmUp[] = [];
  for (let round = 0; round <= options.rounds; round++) {
    progress(round === 0 ? 'warm-up round' : `round ${round}/${options.rounds}`);
    const budgetMs = round === 0 ? options.warmupMs : options.budgetMs;
    for (const transport of options.transports) {
      for (const workload of options.workloads) {
        for (const variant of rotate(variantsFor(options, transport, workload), round)) {
          const { worker } = workers.get(`${transport}|${variant.key}`)!;
          const reply = await worker.send({ type: 'run', workload, budgetMs, isWarmUp: round === 0 });
          if (reply.type !== 'result') continue;
          if (round === 0) {
            warmUps.push({ transport, workload, variant: variant.key, runs: reply.result.warmUpRuns ?? 1 });
            continue;
          }
          const key = `${transport}|${workload}|${variant.key}`;
          if (!cells.has(key)) cells.set(key, { transport, workload, variant: variant.key, runs: [] });
          cells.get(key)!.runs.push(reply.result);
        }
      }
    }
  }
  return { cells: [...cells.values()], rss: await finishWorkers(workers), warmUps };
}

async function finishWorkers(workers: Workers): Promise<PeakRss[]> {
  const rss: PeakRss[] = [];
  for (const { variant, transport, worker } of workers.values()) {
    const reply = await worker.send({ type: 'finish' });
    if (reply.type !== 'finished') continue;
    rss.push({
      variant: variant.key,
      transport,
      clientPeakRssBytes: reply.clientPeakRssBytes,
      serverPeakRssBytes: reply.serverPeakRssBytes,
    });
    await worker.exited();
  }
  return rss;
}
