/**
 * Start-up, side by side: how long a fresh Node process takes to load each library (and bare
 * `node`), and how long a process takes from spawn to its first `initialize` answer: the
 * conformance agent alone, the conductor with it, and with one and two passthrough proxies before
 * it; and the floor of the same chain without the library (`bench/floor/`: a conductor, proxies and
 * an agent of plain NDJSON lines). Every sample is a fresh process; each round visits every
 * configuration once, in an order shuffled per round, so drift on a shared machine falls on all of
 * them alike. A chain of two proxies is also timed right next to the floor's chain with the same
 * agent, pair by pair: its ratio to the floor.
 *
 * @packageDocumentation
 */
import { spawn, spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'dist');
const NODE = process.execPath;

/** One configuration's samples, in ms. */
export interface StartupFigure {
  name: string;
  samples: number[];
  median: number;
  min: number;
  max: number;
}

/** A first-answer row: its samples, and the median of its ratios to its reference, pair by pair. */
export interface FirstAnswerFigure extends StartupFigure {
  /** `undefined` for a reference row (the agent alone, the raw agent alone). */
  pairedRatio: number | undefined;
  /**
   * For a chain of two proxies: the median of its ratios to the floor's chain with the same agent,
   * timed right next to each other (pairs of their own, after each round's reference pairs).
   */
  floorRatio?: number;
}

/** Both start-up tables, and the 1-minute load average over the rounds. */
export interface StartupResult {
  load: StartupFigure[];
  firstAnswer: FirstAnswerFigure[];
  loadAverage: { min: number; max: number };
}

/** What `node -e` runs to load each library (the time is the whole process, spawn to exit). */
const LOADS: Record<string, string> = {
  'bare node': '',
  "acp-wire: require('acp-wire')": `require(${JSON.stringify(join(DIST, 'lib', 'index.js'))})`,
  "acp-wire: require('acp-wire').Connection": `require(${JSON.stringify(join(DIST, 'lib', 'index.js'))}).Connection`,
  "acp-wire: every export of 'acp-wire'": `const m = require(${JSON.stringify(join(DIST, 'lib', 'index.js'))}); for (const k in m) m[k]`,
  'acp-wire/connection + /transports': `require(${JSON.stringify(join(DIST, 'lib', 'connection', 'index.js'))}); require(${JSON.stringify(join(DIST, 'lib', 'transports', 'index.js'))})`,
  "vscode-jsonrpc: require('vscode-jsonrpc/node')": "require('vscode-jsonrpc/node')",
  "ACP SDK: require('@agentclientprotocol/sdk')": "require('@agentclientprotocol/sdk')",
};

/** The processes timed to their first `initialize` answer, of the build in `dist`: argv after `node`. */
function chainsOf(dist: string, suffix = ''): Record<string, string[]> {
  const agent = `node ${join(dist, 'examples', 'conformance-agent.js')}`;
  const proxy = `node ${join(dist, 'examples', 'passthrough-proxy.js')}`;
  const conduct = [join(dist, 'bin', 'acp-wire.js'), 'conduct'];
  return {
    [`agent alone${suffix}`]: [join(dist, 'examples', 'conformance-agent.js')],
    [`conductor + agent${suffix}`]: [...conduct, agent],
    [`conductor + 1 proxy + agent${suffix}`]: [...conduct, proxy, agent],
    [`conductor + 2 proxies + agent${suffix}`]: [...conduct, proxy, proxy, agent],
  };
}

/**
 * The chain's floor: the same four processes with no library in the conductor and the proxies
 * (and, in the last row, none in the agent either), timed like the chains above.
 */
function floorChains(): Record<string, string[]> {
  const floor = (name: string): string => join(DIST, 'bench', 'floor', `${name}.js`);
  const rawProxy = `node ${floor('raw-proxy')}`;
  return {
    [`${FLOOR}raw agent alone`]: [floor('raw-agent')],
    [`${FLOOR}raw conductor + 2 raw proxies + agent`]: [
      floor('raw-conductor'),
      rawProxy,
      rawProxy,
      `node ${join(DIST, 'examples', 'conformance-agent.js')}`,
    ],
    [`${FLOOR}raw conductor + 2 raw proxies + raw agent${VS_RAW_AGENT}`]: [
      floor('raw-conductor'),
      rawProxy,
      rawProxy,
      `node ${floor('raw-agent')}`,
    ],
  };
}

/** How the rows of the build given by `--startup-against` are named: `agent alone (against)`. */
const AGAINST = ' (against)';
/** How the floor's rows are named. */
const FLOOR = 'floor: ';
/** The end of the name of a row whose ratio is to the raw agent alone (not to the agent alone). */
const VS_RAW_AGENT = ' (vs raw agent alone)';
/** The floor's chain the chains of two proxies are also timed against, pair by pair. */
const FLOOR_CHAIN = `${FLOOR}raw conductor + 2 raw proxies + agent`;
/** Whether `row` is a chain of two proxies (of this build or the one it is timed against). */
const isTwoProxyChain = (row: string): boolean => row.startsWith('conductor + 2 proxies + agent');

const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;

function timeLoad(code: string): number {
  const started = performance.now();
  const result = spawnSync(NODE, ['-e', code], { cwd: ROOT, stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`node -e ${code} exited ${result.status}`);
  return performance.now() - started;
}

/** Times `rows` in a random order; returns their ms by row. */
async function timePair(chains: Record<string, string[]>, rows: string[]): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  for (const row of shuffled(rows)) times.set(row, await timeFirstAnswer(chains[row]!));
  return times;
}

/** Spawns `argv`, sends `initialize` at once, and resolves with the ms until the first line comes back; then ends the process. */
function timeFirstAnswer(argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(NODE, argv, { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ACP_WIRE_LOG: '' } });
    let elapsed: number | undefined;
    child.stdin.write(INITIALIZE);
    child.stdout.on('data', (chunk: Buffer) => {
      if (elapsed !== undefined || !chunk.includes(10)) return;
      elapsed = performance.now() - started;
      child.stdin.end(); // the chain then shuts down; the next sample waits for its exit
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(timer);
      if (elapsed === undefined) reject(new Error(`no initialize answer from ${argv.join(' ')}`));
      else resolve(elapsed);
    });
  });
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function figure(name: string, samples: number[]): StartupFigure {
  return { name, samples, median: median(samples)!, min: Math.min(...samples), max: Math.max(...samples) };
}

/**
 * Runs `rounds` rounds of both start-up measurements (one discarded warm-up round first); with
 * `against` (another build's root), its chains too, in the same rounds. Each chain is timed right
 * next to its reference (the agent alone of its build, or the raw agent alone), in a random order
 * within the pair, so that its ratio is taken pair by pair while the machine's load drifts.
 */
export async function runStartup(rounds: number, progress: (line: string) => void, against?: string): Promise<StartupResult> {
  const chains = { ...chainsOf(DIST), ...(against === undefined ? {} : chainsOf(join(against, 'dist'), AGAINST)), ...floorChains() };
  const loads = new Map(Object.keys(LOADS).map((name) => [name, [] as number[]]));
  const answers = new Map(Object.keys(chains).map((name) => [name, [] as number[]]));
  const ratios = new Map(Object.keys(chains).map((name) => [name, [] as number[]]));
  const floorRatios = new Map(
    Object.keys(chains)
      .filter(isTwoProxyChain)
      .map((name) => [name, [] as number[]]),
  );
  const loadAverages: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    progress(`start-up: round ${round}/${rounds}${round === 0 ? ' (warm-up)' : ''}`);
    if (round > 0) loadAverages.push(loadavg()[0]!);
    for (const name of shuffled([...loads.keys()])) {
      const ms = timeLoad(LOADS[name]!);
      if (round > 0) loads.get(name)!.push(ms);
    }
    for (const name of shuffled(Object.keys(chains).filter((row) => referenceOf(row) !== row))) {
      const times = await timePair(chains, [name, referenceOf(name)]);
      if (round === 0) continue;
      for (const [row, ms] of times) answers.get(row)!.push(ms);
      ratios.get(name)!.push(times.get(name)! / times.get(referenceOf(name))!);
    }
    for (const name of shuffled([...floorRatios.keys()])) {
      const times = await timePair(chains, [name, FLOOR_CHAIN]);
      if (round > 0) floorRatios.get(name)!.push(times.get(name)! / times.get(FLOOR_CHAIN)!);
    }
  }
  return {
    load: [...loads].map(([name, samples]) => figure(name, samples)),
    firstAnswer: [...answers].map(([name, samples]) => ({
      ...figure(name, samples),
      pairedRatio: median(ratios.get(name)!),
      ...(floorRatios.has(name) ? { floorRatio: median(floorRatios.get(name)!) } : {}),
    })),
    loadAverage: { min: Math.min(...loadAverages), max: Math.max(...loadAverages) },
  };
}

/** The row a first-answer row's ratio is taken to: the agent alone of its build, or the raw agent alone. */
function referenceOf(name: string): string {
  if (name.endsWith(AGAINST)) return `agent alone${AGAINST}`;
  return name.endsWith(VS_RAW_AGENT) ? `${FLOOR}raw agent alone` : 'agent alone';
}

/** The two Markdown tables. */
export function formatStartup(result: StartupResult): string {
  const bare = result.load.find((row) => row.name === 'bare node')!.median;
  const vscode = result.load.find((row) => row.name.startsWith('vscode-jsonrpc'))!.median - bare;
  const ms = (value: number): string => value.toFixed(1);
  const load = result.load.map((row) => {
    const over = row.median - bare;
    const ratio = row.name === 'bare node' ? '' : `${(over / vscode).toFixed(2)}×`;
    return `| ${row.name} | ${ms(row.median)} | ${ms(row.min)}–${ms(row.max)} | ${row.name === 'bare node' ? '' : ms(over)} | ${ratio} |`;
  });
  const answers = result.firstAnswer.map((row) => {
    const ratio = row.pairedRatio === undefined ? '1.00×' : `${row.pairedRatio.toFixed(2)}×`;
    const floor = row.floorRatio === undefined ? '' : `${row.floorRatio.toFixed(2)}×`;
    return `| ${row.name} | ${ms(row.median)} | ${ms(row.min)}–${ms(row.max)} | ${ratio} | ${floor} |`;
  });
  const samples = result.load[0]?.samples.length ?? 0;
  return [
    `### Start-up: module load (a fresh process per sample, ${samples} interleaved rounds; ms from spawn to exit)`,
    '',
    '| process | median | range | over bare node | load vs vscode-jsonrpc |',
    '|---|---:|---:|---:|---:|',
    ...load,
    '',
    `### Start-up: spawn to the first \`initialize\` answer (${samples} interleaved rounds, load average ${result.loadAverage.min.toFixed(1)}–${result.loadAverage.max.toFixed(1)}; ms)`,
    '',
    '| processes | median | range | vs agent alone (median of paired ratios) | vs the floor with the same agent (paired) |',
    '|---|---:|---:|---:|---:|',
    ...answers,
  ].join('\n');
}
