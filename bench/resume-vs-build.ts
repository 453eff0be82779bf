/**
 * Resumption's cost against another build of acp-wire (for example the one before resumption
 * existed): the cells of `bench/resume.ts` with three runs a round — the other build with
 * resumption off, this build off, this build on — in one process, the order rotated each round,
 * one warm-up round discarded. Run as
 * `node dist/bench/resume-vs-build.js <other build's dist/lib> [rounds] [budgetMs]`
 * (build the other commit in a worktree first: `git worktree add ../old <commit>`, link
 * `node_modules`, `npm run build`).
 *
 * @packageDocumentation
 */
import { type RemoteLibrary, type Transport, type Workload, measure, median, open } from './resume';

/** The three runs of a round. */
const RUNS = ['otherOff', 'off', 'on'] as const;
type Run = (typeof RUNS)[number];

async function cell(other: RemoteLibrary, transport: Transport, workload: Workload, rounds: number, budgetMs: number): Promise<string> {
  const cpu: Record<Run, number[]> = { otherOff: [], off: [], on: [] };
  const ratios = { onOverOther: [] as number[], offOverOther: [] as number[], onOverOff: [] as number[] };
  for (let round = 0; round <= rounds; round++) {
    const got: Partial<Record<Run, number>> = {};
    for (let k = 0; k < RUNS.length; k++) {
      const run = RUNS[(k + round) % RUNS.length]!;
      const harness = run === 'otherOff' ? await open(transport, false, other) : await open(transport, run === 'on');
      got[run] = (await measure(harness.client, workload, budgetMs)).cpu;
      await harness.close();
    }
    if (round === 0) continue;
    for (const run of RUNS) cpu[run].push(got[run]!);
    ratios.onOverOther.push(got.on! / got.otherOff!);
    ratios.offOverOther.push(got.off! / got.otherOff!);
    ratios.onOverOff.push(got.on! / got.off!);
  }
  const us = (run: Run): string => median(cpu[run]).toFixed(1);
  const ratio = (values: number[]): string => median(values).toFixed(3);
  return `| ${transport} | ${workload} | ${us('otherOff')} | ${us('off')} | ${us('on')} | ${ratio(ratios.onOverOther)} | ${ratio(ratios.offOverOther)} | ${ratio(ratios.onOverOff)} |`;
}

async function main(): Promise<void> {
  const [path, roundsText, budgetText] = process.argv.slice(2);
  if (path === undefined) throw new Error('usage: resume-vs-build <other build dist/lib> [rounds] [budgetMs]');
  const other = require(path) as RemoteLibrary;
  const rounds = Number(roundsText ?? 15);
  const budgetMs = Number(budgetText ?? 300);
  const lines = [
    '| transport | workload | CPU µs/op, other build off | this build off | this build on | on ÷ other off | off ÷ other off | on ÷ off |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const transport of ['websocket', 'http'] as const) {
    for (const workload of ['sequential', 'inflight-100'] as const) lines.push(await cell(other, transport, workload, rounds, budgetMs));
  }
  process.stdout.write(`${lines.join('\n')}\n\nMedians of ${rounds} rounds of ${budgetMs} ms per run.\n`);
}

void main();
