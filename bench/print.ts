/**
 * Formats a {@link BenchReport} as Markdown tables (readable in a terminal, pasteable in a README).
 *
 * @packageDocumentation
 */
import type { BenchReport, Row } from './summary';
import { TRANSPORTS } from './transports';

const MIB = 1024 * 1024;

/** A Markdown table; `align` has one letter per column: `l`eft or `r`ight. */
function table(header: string[], rows: string[][], align: string): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const isLeft = (i: number): boolean => align[i] !== 'r';
  const line = (cells: string[]) => `| ${cells.map((c, i) => (isLeft(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (isLeft(i) ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

function number(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function ratio(value: number | undefined): string {
  return value === undefined ? '' : `${value.toFixed(2)}×`;
}

function rowCells(row: Row, first: boolean): string[] {
  const value = row.unit === 'µs' ? `${number(row.median, 1)} µs` : `${number(row.median)}/s`;
  const failed = row.failures > 0 ? ` (${row.failures} failed)` : '';
  return [
    first ? row.workload : '',
    row.library,
    value + failed,
    ratio(row.vsRaw),
    ratio(row.vsAcpWire),
    number(row.cpuUsPerOp, 2),
    ratio(row.cpuVsRaw),
  ];
}

/** One table per transport: each workload's libraries with median, ratios and CPU per operation. */
export function formatMain(report: BenchReport): string {
  const parts: string[] = [];
  for (const transport of TRANSPORTS) {
    const rows = report.rows.filter((r) => r.transport === transport);
    if (rows.length === 0) continue;
    const cells = rows.map((row, i) => rowCells(row, i === 0 || rows[i - 1]!.workload !== row.workload));
    parts.push(
      `### ${transport}\n\n${table(['workload', 'library', 'median', 'vs raw', 'vs acp-wire', 'CPU µs/op', 'CPU vs raw'], cells, 'llrrrrr')}`,
    );
  }
  return parts.join('\n\n');
}

function acpWireVs(rows: Row[], row: Row, peer: string): string {
  const other = rows.find((r) => r.transport === row.transport && r.workload === row.workload && r.library === peer);
  return other?.vsAcpWire ? ratio(1 / other.vsAcpWire) : '';
}

/**
 * acp-wire alone, one row per transport and workload: its median, its speed relative to raw, the
 * CPU per operation of raw and of acp-wire, and its speed relative to the other libraries.
 */
export function formatSummary(report: BenchReport): string {
  const mine = report.rows.filter((r) => r.library === 'acp-wire');
  const cells = mine.map((row) => {
    const raw = report.rows.find((r) => r.transport === row.transport && r.workload === row.workload && r.library === 'raw');
    return [
      row.transport,
      row.workload,
      row.unit === 'µs' ? `${number(row.median, 1)} µs` : `${number(row.median)}/s`,
      ratio(row.vsRaw),
      raw ? `${number(raw.cpuUsPerOp, 2)} → ${number(row.cpuUsPerOp, 2)}` : number(row.cpuUsPerOp, 2),
      ratio(row.cpuVsRaw),
      acpWireVs(report.rows, row, 'vscode-jsonrpc'),
      acpWireVs(report.rows, row, 'acp-sdk'),
    ];
  });
  const header = [
    'transport',
    'workload',
    'acp-wire',
    'vs raw',
    'CPU µs/op raw → acp-wire',
    'CPU vs raw',
    'vs vscode-jsonrpc',
    'vs acp-sdk',
  ];
  return table(header, cells, 'llrrrrrr');
}

/** Peak RSS of each client process (all its workloads) and of its server process. */
export function formatRss(report: BenchReport): string {
  const cells = report.rss.map((r) => [
    r.variant,
    r.transport,
    number(r.clientPeakRssBytes / MIB, 1),
    r.serverPeakRssBytes === undefined ? '(same process)' : number(r.serverPeakRssBytes / MIB, 1),
  ]);
  return table(['library', 'transport', 'client peak RSS MiB', 'server peak RSS MiB'], cells, 'llrr');
}

/** Runs of the budget each variant needed before its CPU per operation was steady. */
export function formatWarmUps(report: BenchReport): string {
  const variants = [...new Set(report.warmUps.map((w) => w.variant))];
  const keys = [...new Set(report.warmUps.map((w) => `${w.transport} ${w.workload}`))];
  const cells = keys.map((key) => [
    key,
    ...variants.map((variant) =>
      String(report.warmUps.find((w) => `${w.transport} ${w.workload}` === key && w.variant === variant)?.runs ?? ''),
    ),
  ]);
  return table(['cell', ...variants], cells, `l${'r'.repeat(variants.length)}`);
}

/** The tracker comparison. */
export function formatTracker(report: BenchReport): string {
  const cells = report.tracker.map((t) => [
    `${t.transport} ${t.workload}`,
    number(t.shipped, t.workload === 'cancel' ? 1 : 0),
    number(t.noTracker, t.workload === 'cancel' ? 1 : 0),
    `${t.overheadPct.toFixed(1)}%`,
    `${t.cpuOverheadPct.toFixed(1)}%`,
  ]);
  return table(['workload', 'shipped', 'no tracker', 'time overhead', 'CPU overhead'], cells, 'lrrrr');
}

/** Bytes per pending request on each side, and what is left after they are answered. */
export function formatMemory(report: BenchReport): string {
  const cells = report.memory.map((m) => [
    m.library,
    number(m.clientBytesEach),
    number(m.serverBytesEach),
    number(m.clientAfterRelease / 1024),
    number(m.serverAfterRelease / 1024),
  ]);
  return table(['library', 'client B/request', 'server B/request', 'client KiB after', 'server KiB after'], cells, 'lrrrr');
}

/** The soak's heap samples. */
export function formatSoak(report: BenchReport): string {
  const soak = report.soak;
  if (!soak) return '';
  const kib = soak.samples.map((s) => number(s / 1024)).join(', ');
  return [
    `${number(soak.roundTrips)} round trips in ${soak.seconds.toFixed(1)} s (checkpoints included).`,
    `heap after full GC, KiB: ${kib}`,
    `growth first→last: ${number(soak.growthBytes / 1024)} KiB; slope ${soak.slopePerThousand.toFixed(1)} B per 1,000 round trips; left pending/in flight: ${soak.leftOver}`,
  ].join('\n');
}

/** The framer comparison. */
export function formatFraming(report: BenchReport): string {
  const cells = report.framing.map((f) => {
    const shipped = report.framing.find((g) => g.direction === f.direction && g.framer.startsWith('acp-wire'))!;
    return [f.direction, f.framer, number(f.messagesPerSecond), ratio(f.messagesPerSecond / shipped.messagesPerSecond)];
  });
  return table(['direction', 'framer', 'msgs/s', 'vs shipped'], cells, 'llrr');
}

/** The targets, met or missed. */
export function formatTargets(report: BenchReport): string {
  const cells = report.targets.map((t) => [t.target, t.where, t.actual, t.met ? 'met' : 'MISSED']);
  return table(['target', 'where', 'actual', ''], cells, 'llrl');
}

/** The whole report. */
export function formatReport(report: BenchReport): string {
  const meta = report.meta;
  const sections: [string, boolean, () => string][] = [
    [
      'acp-wire at a glance (medians; ratios are per-round speed ratios, medians: > 1 is faster)',
      report.rows.length > 0,
      () => formatSummary(report),
    ],
    ['Side by side (medians; ratios are speed: > 1 is faster)', report.rows.length > 0, () => formatMain(report)],
    ['Peak RSS', report.rss.length > 0, () => formatRss(report)],
    [
      `Warm-up: runs of ${String(meta.warmupMs)} ms until the CPU per operation of the last three agrees within 10%`,
      report.warmUps.length > 0,
      () => formatWarmUps(report),
    ],
    ['Weak-ref tracker cost (acp-wire)', report.tracker.length > 0, () => formatTracker(report)],
    ['Requests pending at once', report.memory.length > 0, () => formatMemory(report)],
    ['Heap soak (acp-wire)', report.soak !== undefined, () => formatSoak(report)],
    ['Framing', report.framing.length > 0, () => formatFraming(report)],
    ['Targets (reported, not asserted)', report.targets.length > 0, () => formatTargets(report)],
  ];
  const head = `acp-wire benchmark — ${String(meta.date)} — ${String(meta.mode)} mode, ${String(meta.rounds)} rounds of ${String(meta.budgetMs)} ms cells\n${String(meta.machine)}`;
  return [head, ...sections.filter(([, has]) => has).map(([title, , body]) => `## ${title}\n\n${body()}`)].join('\n\n');
}
