/**
 * What resumption costs when nothing drops: acp-wire's WebSocket and Streamable HTTP, client and
 * server in this process on 127.0.0.1, with `resume` (and the client's `reconnect`) off and on, in
 * alternating order per round; medians of the rounds. Run as
 * `node dist/bench/resume.js <rounds> <budgetMs>` (it reports over IPC, as every forked bench part).
 *
 * @packageDocumentation
 */
import { cpus, loadavg } from 'node:os';
import * as acpWire from '../lib';
import type { Connection } from '../lib';
import { ECHO, SMALL_PARAMS } from './protocol';

/** One measured cell. */
export interface ResumeCell {
  transport: 'websocket' | 'http';
  workload: 'sequential' | 'inflight-100';
  /** Operations per second, resumption off and on. */
  off: number;
  on: number;
  /** CPU time (client and server, this one process) per operation, in µs, off and on. */
  cpuOff: number;
  cpuOn: number;
  /**
   * The median over rounds of each round's CPU µs/op on ÷ off (the two runs of a round are
   * back to back, so a change in the machine's load moves both).
   */
  cpuRatio: number;
  /** The lowest and highest of those per-round ratios. */
  cpuRatioMin: number;
  cpuRatioMax: number;
  /** The 1-minute load average when the cell started and when it ended. */
  loadBefore: number;
  loadAfter: number;
}

/** A cell's transport. */
export type Transport = ResumeCell['transport'];
/** A cell's workload. */
export type Workload = ResumeCell['workload'];
/** The parts of acp-wire a cell uses: this build's, or another build's (see `bench/resume-vs-build.ts`). */
export type RemoteLibrary = Pick<typeof acpWire, 'listenRemote' | 'connectWebSocket' | 'connectHttp'>;

/**
 * A server and a client of `library` on 127.0.0.1, `initialize` done; resumption on (server
 * `resume`, client `reconnect`) or off (left out, so that a build without resumption takes them).
 */
export async function open(transport: Transport, isResumable: boolean, library: RemoteLibrary = acpWire) {
  const { listenRemote, connectWebSocket, connectHttp } = library;
  const resume = isResumable ? { resume: true } : {};
  const listener = await listenRemote({ heartbeat: false, ...resume }, (connection) => {
    connection.onRequest('initialize', () => ({ protocolVersion: 2, capabilities: {} }));
    connection.onRequest(ECHO, (params: unknown) => params ?? null);
  });
  const reconnect = isResumable ? { reconnect: {} } : {};
  const client: Connection =
    transport === 'websocket'
      ? await connectWebSocket(listener.url, { heartbeat: false, ...reconnect })
      : connectHttp(listener.httpUrl, reconnect);
  await client.sendRequest('initialize', { protocolVersion: 2 });
  return {
    client,
    close: async () => {
      await client.close();
      await listener.close();
    },
  };
}

/** Runs `workload` for `budgetMs`; returns operations per second and CPU µs per operation. */
export async function measure(client: Connection, workload: Workload, budgetMs: number): Promise<{ rate: number; cpu: number }> {
  const loops = workload === 'sequential' ? 1 : 100;
  const deadline = performance.now() + budgetMs;
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  let ops = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (performance.now() < deadline) {
        await client.sendRequest(ECHO, SMALL_PARAMS);
        ops++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  return { rate: ops / seconds, cpu: (cpu.user + cpu.system) / ops };
}

/** The median of `values` (the upper one of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function cell(transport: Transport, workload: Workload, rounds: number, budgetMs: number): Promise<ResumeCell> {
  const samples = { off: [] as number[], on: [] as number[], cpuOff: [] as number[], cpuOn: [] as number[], ratio: [] as number[] };
  const loadBefore = loadavg()[0]!;
  for (let round = 0; round <= rounds; round++) {
    // Alternate which goes first; round 0 is a discarded warm-up.
    const cpu = { off: 0, on: 0 };
    for (const isResumable of round % 2 === 0 ? [false, true] : [true, false]) {
      const harness = await open(transport, isResumable);
      const measured = await measure(harness.client, workload, budgetMs);
      await harness.close();
      samples[isResumable ? 'on' : 'off'].push(measured.rate);
      cpu[isResumable ? 'on' : 'off'] = measured.cpu;
    }
    if (round === 0) {
      samples.off.length = samples.on.length = 0;
      continue;
    }
    samples.cpuOff.push(cpu.off);
    samples.cpuOn.push(cpu.on);
    samples.ratio.push(cpu.on / cpu.off);
  }
  return {
    transport,
    workload,
    off: median(samples.off),
    on: median(samples.on),
    cpuOff: median(samples.cpuOff),
    cpuOn: median(samples.cpuOn),
    cpuRatio: median(samples.ratio),
    cpuRatioMin: Math.min(...samples.ratio),
    cpuRatioMax: Math.max(...samples.ratio),
    loadBefore,
    loadAfter: loadavg()[0]!,
  };
}

/** Measures every cell. */
export async function runResume(rounds: number, budgetMs: number): Promise<ResumeCell[]> {
  const cells: ResumeCell[] = [];
  for (const transport of ['websocket', 'http'] as const) {
    for (const workload of ['sequential', 'inflight-100'] as const) cells.push(await cell(transport, workload, rounds, budgetMs));
  }
  return cells;
}

/** The cells as a Markdown table. */
export function formatResume(cells: readonly ResumeCell[]): string {
  const lines = [
    '### Resumption on the happy path (acp-wire, client and server in one process, 127.0.0.1)',
    '',
    '| transport | workload | off | on | on vs off | CPU µs/op off | CPU µs/op on | CPU on ÷ off (min–max) | load |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const c of cells) {
    const rate = (n: number): string => `${Math.round(n).toLocaleString('en-US')}/s`;
    const ratio = `${c.cpuRatio.toFixed(2)} (${c.cpuRatioMin.toFixed(2)}–${c.cpuRatioMax.toFixed(2)})`;
    lines.push(
      `| ${c.transport} | ${c.workload} | ${rate(c.off)} | ${rate(c.on)} | ${(c.on / c.off).toFixed(2)}× | ${c.cpuOff.toFixed(1)} | ${c.cpuOn.toFixed(1)} | ${ratio} | ${c.loadBefore.toFixed(1)}→${c.loadAfter.toFixed(1)} |`,
    );
  }
  lines.push('', `Rounds of resumption off and on back to back, medians; "load": the 1-minute load average (${cpus().length} CPUs).`);
  return lines.join('\n');
}

if (require.main === module) {
  const [rounds, budgetMs] = process.argv.slice(2).map(Number);
  void runResume(rounds ?? 3, budgetMs ?? 300).then((cells) => {
    if (process.send) process.send(cells);
    else process.stdout.write(`${formatResume(cells)}\n`);
  });
}
