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
export type WorkerCommand = { type: 'run'; workload: WorkloadName; budgetMs: number } | { type: 'finish' };

/** One workload's result with the CPU time both sides spent on it. */
export interface CellResult extends WorkloadResult {
  /** CPU time of the client process plus the server process (if separate), in microseconds. */
  cpuUs: number;
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

async function runCell(harness: Harness, workload: WorkloadName, budgetMs: number): Promise<CellResult> {
  const server0 = await harness.remoteStats();
  const cpu0 = cpuNow();
  const result = await runWorkload(harness.client, workload, budgetMs);
  const cpu1 = cpuNow();
  const server1 = await harness.remoteStats();
  const serverCpu = server0 && server1 ? server1.cpuUs - server0.cpuUs : 0;
  return { ...result, cpuUs: cpu1 - cpu0 + serverCpu };
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
    const work = command.type === 'run'
      ? runCell(harness, command.workload, command.budgetMs).then((result) => reply({ type: 'result', result }))
      : finish(harness);
    work.catch((error: unknown) => reply({ type: 'failed', message: String((error as Error)?.stack ?? error) }));
  });
  reply({ type: 'ready' });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench worker failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
