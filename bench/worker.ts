/**
 * A benchmark worker: one library over one transport, kept alive across rounds. The runner
 * (`run.ts`) forks it and asks it, over IPC, to run one workload at a time.
 *
 * @remarks Usage: `fork('dist/bench/worker.js', [library, transport])`. Messages in:
 * {@link WorkerCommand}; out: {@link WorkerReply}.
 *
 * @packageDocumentation
 */
import { libraryNamed } from './adapters';
import { openHarness, type Harness, type TransportName } from './transports';
import { runWorkload, type WorkloadName, type WorkloadResult } from './workloads';

/** A command from the runner. */
export type WorkerCommand = { type: 'run'; workload: WorkloadName; budgetMs: number; isWarmUp?: boolean } | { type: 'finish' };

/** One workload's result with the CPU time both sides spent on it. */
export interface CellResult extends WorkloadResult {
  /** CPU time of the client process plus the server process (if separate), in microseconds. */
  cpuUs: number;
  /** A warm-up: how many runs of the budget it took to reach a steady CPU time per operation. */
  warmUpRuns?: number;
}

/** A reply to the runner. */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'result'; result: CellResult }
  | { type: 'finished'; clientPeakRssBytes: number; serverPeakRssBytes: number | undefined }
  | { type: 'failed'; message: string };

function reply(message: WorkerReply): void {
  process.send!(message);
}

function cpuNow(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/**
 * Runs one cell: first the same workload unmeasured for a quarter of the budget, so that the
 * measured part starts in that workload's steady state rather than in the state the previous cell
 * left (other code paths compiled, its garbage half-collected), then the measured run.
 */
async function runCell(harness: Harness, workload: WorkloadName, budgetMs: number): Promise<CellResult> {
  await runWorkload(harness.client, workload, budgetMs / 4);
  return measure(harness, workload, budgetMs);
}

async function measure(harness: Harness, workload: WorkloadName, budgetMs: number): Promise<CellResult> {
  const server0 = await harness.remoteStats();
  const cpu0 = cpuNow();
  const result = await runWorkload(harness.client, workload, budgetMs);
  const cpu1 = cpuNow();
  const server1 = await harness.remoteStats();
  const serverCpu = server0 && server1 ? server1.cpuUs - server0.cpuUs : 0;
  return { ...result, cpuUs: cpu1 - cpu0 + serverCpu };
}

/** Runs of the budget a warm-up may take at most. */
const MAX_WARM_UP_RUNS = 30;

/**
 * Warms a workload up: runs it for the budget again and again until the CPU time per operation of
 * the last three runs agrees within 10% (at least four runs, at most {@link MAX_WARM_UP_RUNS}).
 *
 * @remarks A fixed warm-up time is not enough on a loaded machine: V8 compiles optimized code on
 * background threads, which starve when the cores are busy, and acp-wire's hot path (~90 functions
 * to optimize) then ran 5–10× slower than its steady state for the first 200–400 ms, while raw's
 * handful of functions was compiled after one short run. Every library is warmed the same way.
 */
async function warmUp(harness: Harness, workload: WorkloadName, budgetMs: number): Promise<CellResult> {
  const perOp: number[] = [];
  for (;;) {
    const result = await measure(harness, workload, budgetMs);
    perOp.push(result.cpuUs / result.ops);
    const last = perOp.slice(-3);
    const isSteady = perOp.length >= 4 && Math.max(...last) <= 1.1 * Math.min(...last);
    if (isSteady || perOp.length === MAX_WARM_UP_RUNS) return { ...result, warmUpRuns: perOp.length };
  }
}

async function finish(harness: Harness): Promise<void> {
  const server = await harness.remoteStats();
  await harness.close();
  reply({
    type: 'finished',
    clientPeakRssBytes: process.resourceUsage().maxRSS * 1024,
    serverPeakRssBytes: server?.maxRssBytes,
  });
  process.disconnect();
}

async function main(): Promise<void> {
  const [libraryName, transport] = process.argv.slice(2) as [string, TransportName];
  const harness = await openHarness(libraryNamed(libraryName), transport);
  // One command at a time: the runner waits for each reply before sending the next.
  process.on('message', (command: WorkerCommand) => {
    const work =
      command.type === 'run'
        ? (command.isWarmUp ? warmUp : runCell)(harness, command.workload, command.budgetMs).then((result) =>
            reply({ type: 'result', result }),
          )
        : finish(harness);
    work.catch((error: unknown) => reply({ type: 'failed', message: String((error as Error)?.stack ?? error) }));
  });
  reply({ type: 'ready' });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench worker failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
