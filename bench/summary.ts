/**
 * Turns raw runs into medians, ratios and target checks.
 *
 * @packageDocumentation
 */
import type { FramerResult } from './framing';
import type { PendingCost } from './memory';
import { NO_TRACKER, type Cell, type SideBySide } from './side-by-side';
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
  /** Each measured run's value, in run order. */
  runs: number[];
  /** Speed relative to raw / to acp-wire (> 1: faster), where both exist. */
  vsRaw: number | undefined;
  vsAcpWire: number | undefined;
  cpuUsPerOp: number;
  failures: number;
}

/** The tracker's cost on one workload: acp-wire as shipped vs registration skipped. */
export interface TrackerCost {
  transport: TransportName;
  workload: WorkloadName;
  shipped: number;
  noTracker: number;
  /** How much slower (throughput) or later (latency) the shipped build is, in percent. */
  overheadPct: number;
  /** How much more CPU per operation the shipped build spends, in percent. */
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
function speedRatio(unit: Row['unit'], value: number, reference: number | undefined): number | undefined {
  if (reference === undefined) return undefined;
  return unit === 'µs' ? reference / value : value / reference;
}

/** Medians and ratios of every cell. */
export function summarize(sideBySide: SideBySide): Row[] {
  const rows: Row[] = sideBySide.cells.map((cell) => {
    const runs = cell.runs.map((_, i) => cellValue(cell, i));
    return {
      transport: cell.transport,
      workload: cell.workload,
      library: cell.variant,
      unit: cell.workload === 'cancel' ? 'µs' : 'ops/s',
      median: median(runs),
      runs,
      vsRaw: undefined,
      vsAcpWire: undefined,
      cpuUsPerOp: median(cell.runs.map((run) => run.cpuUs / run.ops)),
      failures: cell.runs.reduce((sum, run) => sum + run.failures, 0),
    };
  });
  const find = (row: Row, library: string) =>
    rows.find((r) => r.transport === row.transport && r.workload === row.workload && r.library === library)?.median;
  for (const row of rows) {
    row.vsRaw = speedRatio(row.unit, row.median, find(row, 'raw'));
    row.vsAcpWire = speedRatio(row.unit, row.median, find(row, 'acp-wire'));
  }
  return rows;
}

/** The tracker's cost wherever both acp-wire variants ran. */
export function trackerCosts(rows: Row[]): TrackerCost[] {
  const costs: TrackerCost[] = [];
  for (const off of rows.filter((row) => row.library === NO_TRACKER)) {
    const on = rows.find((r) => r.transport === off.transport && r.workload === off.workload && r.library === 'acp-wire');
    if (!on) continue;
    const slower = off.unit === 'µs' ? on.median / off.median : off.median / on.median;
    costs.push({
      transport: off.transport,
      workload: off.workload,
      shipped: on.median,
      noTracker: off.median,
      overheadPct: (slower - 1) * 100,
      cpuOverheadPct: (on.cpuUsPerOp / off.cpuUsPerOp - 1) * 100,
    });
  }
  return costs;
}

function ratioChecks(rows: Row[], workloads: readonly WorkloadName[], label: string, minRaw: number, minPeers: number | undefined): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const row of rows.filter((r) => r.library === 'acp-wire' && workloads.includes(r.workload))) {
    const where = `${row.transport} ${row.workload}`;
    if (row.vsRaw !== undefined) {
      checks.push({ target: `${label} ≥ ${Math.round(minRaw * 100)}% of raw`, where, actual: `${(row.vsRaw * 100).toFixed(0)}%`, met: row.vsRaw >= minRaw });
    }
    if (minPeers === undefined) continue;
    for (const peer of ['vscode-jsonrpc', 'acp-sdk']) {
      const other = rows.find((r) => r.transport === row.transport && r.workload === row.workload && r.library === peer);
      if (!other?.vsAcpWire) continue;
      const times = 1 / other.vsAcpWire;
      checks.push({ target: `${label} ≥ ${minPeers}× ${peer}`, where, actual: `${times.toFixed(2)}×`, met: times >= minPeers });
    }
  }
  return checks;
}

/** Every target of issue 6 that this run has data for. */
export function checkTargets(rows: Row[], tracker: TrackerCost[], memory: PendingCost[], soak: SoakResult | undefined): TargetCheck[] {
  const checks = [
    ...ratioChecks(rows, ROUND_TRIP_WORKLOADS, 'round trips', 0.6, 3),
    ...ratioChecks(rows, ['notifications'], 'notifications', 0.7, 4),
    ...ratioChecks(rows, ['payload-string', 'payload-object'], '1 MiB payloads', 0.85, undefined),
  ];
  for (const cost of tracker.filter((c) => ROUND_TRIP_WORKLOADS.includes(c.workload))) {
    // CPU per operation: on a shared, noisy machine wall time mostly measures the neighbours.
    const actual = `${cost.cpuOverheadPct.toFixed(1)}% CPU (${cost.overheadPct.toFixed(1)}% time)`;
    checks.push({ target: 'tracker overhead < 10%', where: `${cost.transport} ${cost.workload}`, actual, met: cost.cpuOverheadPct < 10 });
  }
  const mine = memory.find((m) => m.library === 'acp-wire');
  if (mine) {
    for (const side of ['client', 'server'] as const) {
      const bytes = side === 'client' ? mine.clientBytesEach : mine.serverBytesEach;
      checks.push({ target: `${mine.requests} pending < 1 KiB each`, where: side, actual: `${bytes.toFixed(0)} B`, met: bytes < 1024 });
    }
  }
  if (soak) {
    const met = soak.growthBytes < 512 * 1024 && soak.leftOver === 0;
    checks.push({ target: 'no heap growth (< 512 KiB)', where: `${soak.roundTrips} round trips`, actual: `${(soak.growthBytes / 1024).toFixed(0)} KiB`, met });
  }
  return checks;
}

/** Everything one benchmark run produced, as written to `--json`. */
export interface BenchReport {
  meta: Record<string, unknown>;
  rows: Row[];
  rss: SideBySide['rss'];
  tracker: TrackerCost[];
  memory: PendingCost[];
  soak: SoakResult | undefined;
  framing: FramerResult[];
  targets: TargetCheck[];
}
