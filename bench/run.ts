/**
 * `npm run bench`: acp-wire side by side with vscode-jsonrpc, @agentclientprotocol/sdk and a raw
 * NDJSON baseline over in-process streams, child-process stdio and TCP; then the pending-request
 * memory test, the heap soak, the framing comparison and the hosting measurements (memory per
 * idle client of `acp-wire serve`, clients per serve process). Prints Markdown tables to stdout and,
 * with `--json FILE`, writes the same as JSON. Progress goes to stderr.
 *
 * @example
 * ```sh
 * npm run bench                      # quick mode, under a minute
 * npm run bench -- --full --json bench-results.json
 * ```
 *
 * @packageDocumentation
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import type { FramerResult } from './framing';
import type { HostingResult } from './hosting';
import { formatHosting } from './hosting-report';
import type { PendingCost } from './memory';
import { USAGE, parseOptions, type BenchOptions } from './options';
import { runOnce } from './pool';
import { formatReport } from './print';
import { formatIndependent, parseCells, runIndependent, type IndependentCell } from './independent';
import { formatResume, type ResumeCell } from './resume';
import { runSideBySide, type SideBySide } from './side-by-side';
import type { SoakResult } from './soak';
import { formatStartup, runStartup, type StartupResult } from './startup';
import { checkTargets, summarize, trackerCosts, type BenchReport } from './summary';

function progress(line: string): void {
  process.stderr.write(`[bench ${(performance.now() / 1000).toFixed(1)}s] ${line}\n`);
}

function machine(): string {
  const cpu = cpus();
  return `Node ${process.version}, ${process.platform}/${process.arch}, ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM`;
}

async function memoryCosts(options: BenchOptions): Promise<PendingCost[]> {
  if (options.pendingRequests === 0) return [];
  const costs: PendingCost[] = [];
  for (const library of options.libraries) {
    progress(`memory: ${options.pendingRequests} pending requests, ${library}`);
    costs.push(await runOnce<PendingCost>('memory.js', [library, String(options.pendingRequests)], ['--expose-gc']));
  }
  return costs;
}

async function soak(options: BenchOptions): Promise<SoakResult | undefined> {
  if (options.soakRoundTrips === 0 || !options.libraries.includes('acp-wire')) return undefined;
  progress(`soak: ${options.soakRoundTrips} round trips`);
  return runOnce<SoakResult>('soak.js', [String(options.soakRoundTrips)], ['--expose-gc']);
}

async function framing(options: BenchOptions): Promise<FramerResult[]> {
  if (options.framingLines === 0) return [];
  progress(`framing: ${options.framingLines} lines`);
  return runOnce<FramerResult[]>('framing.js', [String(options.framingLines), String(options.rounds)]);
}

async function hosting(options: BenchOptions): Promise<HostingResult | undefined> {
  if (options.hostingClients === 0) return undefined;
  progress(
    `hosting: ${options.hostingClients} idle clients in process, ${options.hostingProcesses} with a process each, up to ${options.hostingMax} on one serve`,
  );
  return runOnce<HostingResult>('hosting.js', [
    String(options.hostingClients),
    String(options.hostingProcesses),
    String(options.hostingMax),
  ]);
}

async function resumeCost(options: BenchOptions): Promise<ResumeCell[]> {
  if (options.resumeRounds === 0 || !options.libraries.includes('acp-wire')) return [];
  progress(`resumption cost: ${options.resumeRounds} rounds`);
  return runOnce<ResumeCell[]>('resume.js', [String(options.resumeRounds), String(Math.max(200, options.budgetMs))]);
}

function independent(options: BenchOptions): IndependentCell[] {
  if (options.independentRounds === 0) return [];
  return runIndependent(parseCells(options.independentCells), options.independentRounds, progress, options.independentAgainst);
}

async function sideBySide(options: BenchOptions): Promise<SideBySide> {
  if (options.workloads.length === 0 || options.transports.length === 0) return { cells: [], rss: [], warmUps: [] };
  return runSideBySide(options, progress);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(`${USAGE}\n`);
  const options = parseOptions(argv);
  const started = new Date();
  // First, while no worker of the side-by-side run is alive.
  const startup: StartupResult | undefined =
    options.startupRounds > 0 ? await runStartup(options.startupRounds, progress, options.startupAgainst) : undefined;
  const runs = await sideBySide(options);
  const outside = independent(options);
  const memory = await memoryCosts(options);
  const soakResult = await soak(options);
  const framingResults = await framing(options);
  const hostingResult = await hosting(options);
  const resume = await resumeCost(options);
  const rows = summarize(runs);
  const tracker = trackerCosts(rows);
  const report: BenchReport = {
    meta: { date: started.toISOString(), machine: machine(), node: process.version, ...options, seconds: performance.now() / 1000 },
    rows,
    rss: runs.rss,
    warmUps: runs.warmUps ?? [],
    tracker,
    memory,
    soak: soakResult,
    framing: framingResults,
    targets: checkTargets(rows, tracker, memory, soakResult),
  };
  process.stdout.write(`${formatReport(report)}\n`);
  if (outside.length > 0)
    process.stdout.write(`\n## The outside benchmark's workload (bench/independent.ts)\n\n${formatIndependent(outside)}\n`);
  if (startup) process.stdout.write(`\n${formatStartup(startup)}\n`);
  if (hostingResult) process.stdout.write(`\n${formatHosting(hostingResult)}\n`);
  if (resume.length > 0) process.stdout.write(`\n${formatResume(resume)}\n`);
  if (options.jsonFile) {
    writeFileSync(
      options.jsonFile,
      `${JSON.stringify({ ...report, startup, hosting: hostingResult, resume, independent: outside }, null, 2)}\n`,
    );
    progress(`wrote ${options.jsonFile}`);
  }
  progress('done');
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exitCode = 1;
});
