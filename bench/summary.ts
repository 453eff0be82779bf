/**
 * Turns raw runs into medians, ratios and target checks.
 *
 * @packageDocumentation
 */
import type { FramerResult } from './framing';
import type { PendingCost } from './memory';
import { NO_TRACKER, type Cell, type SideBySide, type WarmUp } from './side-by-side';
import type { SoakResult } from './soak';
import type { TransportName } from './transports';
import { ROUND_TRIP_WORKLOADS, type WorkloadName } from './workloads';

/** One (transport, workload, library) row of the main table. */
export interface Row {
  transport: TransportName;
  workload: WorkloadName;
  library: string;
  /** `ops/s`, or `µs` for the cancel latency. */
  unit: 'ops/s' | 'µs';
  median: number;
  /** Each measured run's value, in run (round) order. */
  runs: number[];
  /**
   * Speed relative to raw / to acp-wire (> 1: faster), where both exist: the median of the
   * per-round ratios (both cells of a round ran back to back, so load on the machine falls on both).
   */
  vsRaw: number | undefined;
  vsAcpWire: number | undefined;
  /** CPU time per operation, median of the rounds, in µs (both processes, collection included). */
  cpuUsPerOp: number;
  /** Each round's CPU µs per operation. */
  cpuRuns: number[];
  /** CPU per operation of raw / of this library, per round, median (> 1: this library spends less). */
  cpuVsRaw: number | undefined;
  /** The same against acp-wire. */
  cpuVsAcpWire: number | undefined;
  failures: number;
}

/** The tracker's cost on one workload: acp-wire as shipped vs registration skipped. */
export interface TrackerCost {
  transport: TransportName;
  workload: WorkloadName;
  shipped: number;
  noTracker: number;
  /** How much slower (throughput) or later (latency) the shipped build is, in percent (per-round ratios, median). */
  overheadPct: number;
  /** How much more CPU per operation the shipped build spends, in percent (per-round ratios, median). */
  cpuOverheadPct: number;
}

/** One checked target. */
export interface TargetCheck {
  target: string;
  where: string;
  actual: string;
  met: boolean;
}

/** The median of `values` (the lower middle for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[(sorted.length - 1) >> 1]!;
}

function cellValue(cell: Cell, index: number): number {
  const run = cell.runs[index]!;
  return cell.workload === 'cancel' ? run.latencyUs! : run.ops / run.seconds;
}

/** Speed ratio of `value` to `reference` (> 1 means faster) for the unit. */
function speedRatio(unit: Row['unit'], value: number, reference: number): number {
  return unit === 'µs' ? reference / value : value / reference;
}

/** The median of `ratio(a[i], b[i])` over the rounds both have. */
function pairedMedian(a: readonly number[], b: readonly number[], ratio: (x: number, y: number) => number): number {
  const n = Math.min(a.length, b.length);
  const ratios: number[] = [];
  for (let i = 0; i < n; i++) ratios.push(ratio(a[i]!, b[i]!));
  return median(ratios);
}

/** Medians and per-round ratios of every cell. */
export function summarize(sideBySide: SideBySide): Row[] {
  const rows: Row[] = sideBySide.cells.map((cell) => {
    const runs = cell.runs.map((_, i) => cellValue(cell, i));
    const cpuRuns = cell.runs.map((run) => run.cpuUs / run.ops);
    return {
      transport: cell.transport,
      workload: cell.workload,
      library: cell.variant,
      unit: cell.workload === 'cancel' ? 'µs' : 'ops/s',
      median: median(runs),
      runs,
      vsRaw: undefined,
      vsAcpWire: undefined,
      cpuUsPerOp: median(cpuRuns),
      cpuRuns,
      cpuVsRaw: undefined,
      cpuVsAcpWire: undefined,
      failures: cell.runs.reduce((sum, run) => sum + run.failures, 0),
    };
  });
  const find = (row: Row, library: string) =>
    rows.find((r) => r.transport === row.transport && r.workload === row.workload && r.library === library);
  for (const row of rows) {
    const raw = find(row, 'raw');
    const mine = find(row, 'acp-wire');
    const speed = (x: number, y: number): number => speedRatio(row.unit, x, y);
    if (raw) {
      row.vsRaw = pairedMedian(row.runs, raw.runs, speed);
      row.cpuVsRaw = pairedMedian(raw.cpuRuns, row.cpuRuns, (x, y) => x / y);
    }
    if (mine) {
      row.vsAcpWire = pairedMedian(row.runs, mine.runs, speed);
      row.cpuVsAcpWire = pairedMedian(mine.cpuRuns, row.cpuRuns, (x, y) => x / y);
    }
  }
  return rows;
}

/** The tracker's cost wherever both acp-wire variants ran. */
export function trackerCosts(rows: Row[]): TrackerCost[] {
  const costs: TrackerCost[] = [];
  for (const off of rows.filter((row) => row.library === NO_TRACKER)) {
    const on = rows.find((r) => r.transport === off.transport && r.workload === off.workload && r.library === 'acp-wire');
    if (!on) continue;
    const slower = pairedMedian(on.runs, off.runs, (x, y) => (off.unit === 'µs' ? x / y : y / x));
    costs.push({
      transport: off.transport,
      workload: off.workload,
      shipped: on.median,
      noTracker: off.median,
      overheadPct: (slower - 1) * 100,
      cpuOverheadPct: (pairedMedian(on.cpuRuns, off.cpuRuns, (x, y) => x / y) - 1) * 100,
    });
  }
  return costs;
}

const SMALL_MESSAGE_WORKLOADS: readonly WorkloadName[] = [...ROUND_TRIP_WORKLOADS, 'notifications'];
const PAYLOAD_WORKLOADS: readonly WorkloadName[] = ['payload-string', 'payload-object'];
const PEERS = ['vscode-jsonrpc', 'acp-sdk'];

/**
 * The ratio a speed target is judged on. In-process cells run in one process and are CPU-bound:
 * on an idle machine their speed is the inverse of their CPU time per operation, which the load of
 * a shared machine does not change, while their wall-clock throughput mostly measures how much of
 * a core the process got. Over stdio, TCP and WebSocket the speed also depends on latency and on
 * two processes being scheduled, so it is the (per-round, paired) wall-clock ratio.
 */
function judged(row: Row, wall: number | undefined, cpu: number | undefined): number | undefined {
  return row.transport === 'in-process' ? cpu : wall;
}

function both(wall: number, cpu: number): string {
  return `${wall.toFixed(2)}× (CPU ${cpu.toFixed(2)}×)`;
}

/** `speed ≥ min × raw` for acp-wire on `workloads` (see {@link judged}); both ratios are shown. */
function rawChecks(rows: Row[], workloads: readonly WorkloadName[], label: string, min: number): TargetCheck[] {
  return rows
    .filter((r) => r.library === 'acp-wire' && workloads.includes(r.workload) && r.vsRaw !== undefined)
    .map((row) => ({
      target: `${label} ≥ ${min}× raw`,
      where: `${row.transport} ${row.workload}`,
      actual: both(row.vsRaw!, row.cpuVsRaw!),
      met: judged(row, row.vsRaw, row.cpuVsRaw)! >= min,
    }));
}

/** acp-wire at least as fast as the fastest peer on `workloads` (see {@link judged}). */
function peerChecks(rows: Row[], workloads: readonly WorkloadName[], label: string): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const row of rows.filter((r) => r.library === 'acp-wire' && workloads.includes(r.workload))) {
    for (const peer of rows.filter((r) => r.transport === row.transport && r.workload === row.workload && PEERS.includes(r.library))) {
      const wall = 1 / peer.vsAcpWire!;
      const cpu = 1 / peer.cpuVsAcpWire!;
      const where = `${row.transport} ${row.workload} vs ${peer.library}`;
      checks.push({ target: `${label} ≥ 1× each peer`, where, actual: both(wall, cpu), met: judged(row, wall, cpu)! >= 1 });
    }
  }
  return checks;
}

/** Every target in bench/README.md "Targets" that this run has data for. */
export function checkTargets(rows: Row[], tracker: TrackerCost[], memory: PendingCost[], soak: SoakResult | undefined): TargetCheck[] {
  const checks = [
    ...rawChecks(rows, SMALL_MESSAGE_WORKLOADS, 'small messages', 0.75),
    ...rows
      .filter(
        (r) =>
          r.library === 'acp-wire' && r.transport === 'in-process' && ROUND_TRIP_WORKLOADS.includes(r.workload) && r.cpuVsRaw !== undefined,
      )
      .map((row) => ({
        target: 'CPU per round trip ≤ 1.5× raw',
        where: `${row.transport} ${row.workload}`,
        actual: `${(1 / row.cpuVsRaw!).toFixed(2)}×`,
        met: 1 / row.cpuVsRaw! <= 1.5,
      })),
    ...rawChecks(rows, PAYLOAD_WORKLOADS, '1 MiB payloads', 0.95),
    ...peerChecks(rows, PAYLOAD_WORKLOADS, '1 MiB payloads'),
    ...rows
      .filter((r) => r.library === 'acp-wire' && r.workload === 'cancel' && r.vsRaw !== undefined)
      .map((row) => ({
        // Latency is wall-clock by nature: judged on the per-round ratio of the medians.
        target: 'cancel latency ≤ 1.2× raw',
        where: `${row.transport} cancel`,
        actual: `${(1 / row.vsRaw!).toFixed(2)}×`,
        met: 1 / row.vsRaw! <= 1.2,
      })),
  ];
  for (const cost of tracker) {
    // CPU per operation: on a shared, noisy machine wall time mostly measures the neighbours.
    const actual = `${cost.cpuOverheadPct.toFixed(1)}% CPU (${cost.overheadPct.toFixed(1)}% time)`;
    checks.push({ target: 'tracker overhead ≤ 5%', where: `${cost.transport} ${cost.workload}`, actual, met: cost.cpuOverheadPct <= 5 });
  }
  const mine = memory.find((m) => m.library === 'acp-wire');
  if (mine) {
    checks.push({
      target: `${mine.requests} pending ≤ 512 B each`,
      where: 'client',
      actual: `${mine.clientBytesEach.toFixed(0)} B`,
      met: mine.clientBytesEach <= 512,
    });
  }
  if (soak) {
    const met = soak.growthBytes < 512 * 1024 && soak.leftOver === 0;
    checks.push({
      target: 'no heap growth (< 512 KiB)',
      where: `${soak.roundTrips} round trips`,
      actual: `${(soak.growthBytes / 1024).toFixed(0)} KiB`,
      met,
    });
  }
  return checks;
}

/** Everything one benchmark run produced, as written to `--json`. */
export interface BenchReport {
  meta: Record<string, unknown>;
  rows: Row[];
  rss: SideBySide['rss'];
  warmUps: WarmUp[];
  tracker: TrackerCost[];
  memory: PendingCost[];
  soak: SoakResult | undefined;
  framing: FramerResult[];
  targets: TargetCheck[];
}
