/**
 * The outside side-by-side benchmark's workload (`bench-independent.md`), acp-wire against its raw
 * NDJSON baseline: every (implementation, transport, workload) in a fresh Node process, all of them
 * visited in a new shuffled order each round, medians of the rounds.
 *
 * @remarks
 * Transports: in process (two `PassThrough` streams, client and server in one thread), TCP (a
 * loopback socket pair in one process, `noDelay` on both ends), stdio (the server in a child
 * process spawned with pipes). Workloads: `seq` (1,000 warm-up requests, then one `await`ed echo of
 * `small` at a time for 2 s), `conc100` (the same warm-up, then 100 requests in flight for 2 s),
 * `notify` (50,000 notifications of `small` sent in one loop, then one request answering how many
 * arrived), `bigstr` / `bigobj` (15 echo round trips of ~1 MiB: one string field, or many small
 * diagnostic-like objects; the median ms of a round trip). CPU is `process.cpuUsage()` around the
 * measured window, plus the child's own for stdio (read by a request just outside the window), per
 * operation.
 *
 * @example
 * ```sh
 * npm run build && node dist/bench/independent.js                     # every cell, 3 rounds
 * node dist/bench/independent.js --rounds 5 --cells in-process/notify,tcp/seq
 * node dist/bench/independent.js --against /tmp/before/dist             # another build too, same rounds
 * node dist/bench/independent.js --one acp-wire in-process notify     # one measurement, JSON
 * node dist/bench/independent.js --ops acp-wire in-process notify 50000  # 50,000 operations, untimed
 * ```
 *
 * `--ops` runs a fixed number of operations for instruction counts (after the same warm-up; for
 * `notify`, that many sent at once): the difference of two counts divided by the difference of
 * their operations, e.g. `valgrind --tool=cachegrind --cache-sim=no node --single-threaded
 * --predictable-gc-schedule --hash-seed=42 --random-seed=42 dist/bench/independent.js --ops
 * acp-wire in-process notify 50000` and the same with 0 (see `bench/ops.ts`).
 *
 * @packageDocumentation
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { COUNT, CPU, ECHO, NOTE, connectClient, serve, type Caller, type ImplName } from './independent-peers';

/** The transports of the outside workload. */
export type IndependentTransport = 'in-process' | 'tcp' | 'stdio';
/** Its workloads. */
export type IndependentWorkload = 'seq' | 'conc100' | 'notify' | 'bigstr' | 'bigobj';

const TRANSPORTS: readonly IndependentTransport[] = ['in-process', 'tcp', 'stdio'];
const WORKLOADS: readonly IndependentWorkload[] = ['seq', 'conc100', 'notify', 'bigstr', 'bigobj'];
const SMALL = { textDocument: { uri: 'file:///repo/src/index.ts' }, position: { line: 120, character: 17 } };
const WARM_UP = 1000;
const WINDOW_MS = 2000;
const NOTIFICATIONS = 50_000;
const BIG_ROUND_TRIPS = 15;
const MIB = 1024 * 1024;

/** One measurement: operations per second (for `bigstr`/`bigobj`, ms per round trip) and CPU µs per operation. */
export interface Measurement {
  perSecond: number;
  msPerOp: number;
  cpuMicros: number;
}

/** A connected client, the CPU the server's own process used so far (0 in process), and the end. */
interface Pair {
  caller: Caller;
  serverCpu(): Promise<number>;
  close(): void;
}

async function openPair(impl: ImplName, transport: IndependentTransport): Promise<Pair> {
  if (transport === 'in-process') {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    serve(impl, toServer, toClient);
    return { caller: connectClient(impl, toClient, toServer), serverCpu: async () => 0, close() {} };
  }
  if (transport === 'tcp') {
    const listener = createServer({ noDelay: true }, (socket) => serve(impl, socket, socket));
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    const socket: Socket = connect({ host: '127.0.0.1', port: (listener.address() as AddressInfo).port, noDelay: true });
    await once(socket, 'connect');
    return { caller: connectClient(impl, socket, socket), serverCpu: async () => 0, close: () => void listener.close() };
  }
  const child = spawn(process.execPath, [join(__dirname, 'independent-peers.js'), impl], { stdio: ['pipe', 'pipe', 'inherit'] });
  const caller = connectClient(impl, child.stdout, child.stdin);
  return { caller, serverCpu: async () => (await caller.request(CPU)) as number, close: () => void child.kill() };
}

function diagnostics(bytes: number): { items: unknown[] } {
  const items: unknown[] = [];
  for (let size = 0, i = 0; size < bytes; i++) {
    const item = {
      range: { start: { line: i, character: 4 }, end: { line: i, character: 17 } },
      severity: 1 + (i % 4),
      code: 2300 + (i % 50),
      source: 'ts',
      message: `Cannot find name 'value${i}'.`,
    };
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return { items };
}

async function timed(pair: Pair, ops: () => Promise<number>): Promise<Measurement> {
  const serverBefore = await pair.serverCpu();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const count = await ops();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const serverUsed = (await pair.serverCpu()) - serverBefore;
  return { perSecond: (count * 1000) / ms, msPerOp: ms / count, cpuMicros: (used.user + used.system + serverUsed) / count };
}

/** `width` lanes of echo requests until `ops` were sent (default: for {@link WINDOW_MS}); returns how many. */
async function lanes(caller: Caller, width: number, ops = Number.POSITIVE_INFINITY): Promise<number> {
  const deadline = ops === Number.POSITIVE_INFINITY ? performance.now() + WINDOW_MS : Number.POSITIVE_INFINITY;
  let count = 0;
  const lane = async (): Promise<void> => {
    while (count < ops && performance.now() < deadline) {
      count++;
      await caller.request(ECHO, SMALL);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return count;
}

/** Sends `count` notifications at once on a new pair, then asks how many arrived. @throws Error if not all did */
async function notifications(caller: Caller, count: number): Promise<number> {
  for (let i = 0; i < count; i++) caller.notify(NOTE, SMALL);
  const received = (await caller.request(COUNT)) as number;
  if (received !== count) throw new Error(`counted ${received} of ${count} notifications`);
  return count;
}

async function warmUp(caller: Caller): Promise<void> {
  for (let i = 0; i < WARM_UP; i++) await caller.request(ECHO, SMALL);
}

const bigParams = (workload: 'bigstr' | 'bigobj'): unknown => (workload === 'bigstr' ? { text: 'x'.repeat(MIB) } : diagnostics(MIB));

/** Runs `ops` operations of `workload` of `impl` over `transport`, untimed (for instruction counts). */
export async function runOps(impl: ImplName, transport: IndependentTransport, workload: IndependentWorkload, ops: number): Promise<void> {
  const pair = await openPair(impl, transport);
  const { caller } = pair;
  try {
    if (workload === 'notify') return void (await notifications(caller, ops));
    if (workload === 'bigstr' || workload === 'bigobj') {
      const params = bigParams(workload);
      for (let i = 0; i < ops; i++) await caller.request(ECHO, params);
      return;
    }
    await warmUp(caller);
    await lanes(caller, workload === 'seq' ? 1 : 100, ops);
  } finally {
    pair.close();
  }
}

async function bigMedian(pair: Pair, params: unknown): Promise<Measurement> {
  const times: number[] = [];
  const measured = await timed(pair, async () => {
    for (let i = 0; i < BIG_ROUND_TRIPS; i++) {
      const started = performance.now();
      await pair.caller.request(ECHO, params);
      times.push(performance.now() - started);
    }
    return BIG_ROUND_TRIPS;
  });
  const msPerOp = median(times);
  return { ...measured, msPerOp, perSecond: 1000 / msPerOp };
}

/** Runs one workload of `impl` over `transport` in this process. */
export async function measureOne(impl: ImplName, transport: IndependentTransport, workload: IndependentWorkload): Promise<Measurement> {
  const pair = await openPair(impl, transport);
  const { caller } = pair;
  try {
    switch (workload) {
      case 'seq':
      case 'conc100':
        await warmUp(caller);
        return await timed(pair, () => lanes(caller, workload === 'seq' ? 1 : 100));
      case 'notify':
        return await timed(pair, () => notifications(caller, NOTIFICATIONS));
      case 'bigstr':
      case 'bigobj':
        return await bigMedian(pair, bigParams(workload));
    }
  } finally {
    pair.close();
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** One (transport, workload) cell: every implementation's runs. */
export interface IndependentCell {
  transport: IndependentTransport;
  workload: IndependentWorkload;
  runs: Record<string, Measurement[]>;
}

/** Parses `transport/workload,…` (default: every cell). @throws RangeError for an unknown cell */
export function parseCells(text: string | undefined): [IndependentTransport, IndependentWorkload][] {
  if (text === undefined) return TRANSPORTS.flatMap((t) => WORKLOADS.map((w): [IndependentTransport, IndependentWorkload] => [t, w]));
  return text
    .split(',')
    .filter(Boolean)
    .map((cell) => {
      const [t, w] = cell.split('/') as [IndependentTransport, IndependentWorkload];
      if (!TRANSPORTS.includes(t) || !WORKLOADS.includes(w)) throw new RangeError(`unknown cell ${cell}`);
      return [t, w];
    });
}

/**
 * Runs `cells` for `rounds` rounds, each configuration in a fresh process (`script --one …`), in
 * a new shuffled order per round; `progress` hears of each. With `against` (another build's
 * `dist`), acp-wire of that build runs too, as `acp-wire@DIR`.
 */
export function runIndependent(
  cells: [IndependentTransport, IndependentWorkload][],
  rounds: number,
  progress: (line: string) => void = () => {},
  against?: string,
): IndependentCell[] {
  const impls: ImplName[] = ['acp-wire', 'raw'];
  if (against !== undefined) impls.push(`acp-wire@${resolve(against)}`);
  const results = cells.map(
    ([transport, workload]): IndependentCell => ({ transport, workload, runs: Object.fromEntries(impls.map((impl) => [impl, []])) }),
  );
  const configs = results.flatMap((cell) => impls.map((impl) => ({ cell, impl })));
  for (let round = 0; round < rounds; round++) {
    for (const { cell, impl } of [...configs].sort(() => Math.random() - 0.5)) {
      progress(`independent round ${round + 1}/${rounds}: ${impl} ${cell.transport} ${cell.workload}`);
      const args = [__filename, '--one', impl, cell.transport, cell.workload];
      const run = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      cell.runs[impl]!.push(JSON.parse(run.stdout) as Measurement);
    }
  }
  return results;
}

/** Medians of one implementation's runs. */
export function medianOf(runs: Measurement[]): Measurement {
  return {
    perSecond: median(runs.map((r) => r.perSecond)),
    msPerOp: median(runs.map((r) => r.msPerOp)),
    cpuMicros: median(runs.map((r) => r.cpuMicros)),
  };
}

/** A Markdown table of the cells: raw, then each acp-wire build (speed vs raw, CPU µs/op raw → acp-wire). */
export function formatIndependent(cells: IndependentCell[]): string {
  const lines = [
    '| transport | workload | implementation | median | speed vs raw | CPU µs/op raw → it | CPU vs raw |',
    '|---|---|---|---:|---:|---:|---:|',
  ];
  for (const cell of cells) {
    const raw = medianOf(cell.runs.raw!);
    const isBig = cell.workload === 'bigstr' || cell.workload === 'bigobj';
    const figure = (m: Measurement): string =>
      isBig ? `${m.msPerOp.toFixed(2)} ms` : `${Math.round(m.perSecond).toLocaleString('en-US')}/s`;
    lines.push(`| ${cell.transport} | ${cell.workload} | raw | ${figure(raw)} | | ${raw.cpuMicros.toFixed(1)} | |`);
    for (const [impl, runs] of Object.entries(cell.runs)) {
      if (impl === 'raw') continue;
      const acp = medianOf(runs);
      const speed = isBig ? raw.msPerOp / acp.msPerOp : acp.perSecond / raw.perSecond;
      lines.push(
        `| ${cell.transport} | ${cell.workload} | ${impl} | ${figure(acp)} | ${speed.toFixed(2)}× | ` +
          `${raw.cpuMicros.toFixed(1)} → ${acp.cpuMicros.toFixed(1)} | ${(raw.cpuMicros / acp.cpuMicros).toFixed(2)}× |`,
      );
    }
  }
  return lines.join('\n');
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

if (require.main === module) {
  const one = process.argv.indexOf('--one');
  const ops = process.argv.indexOf('--ops');
  if (ops !== -1) {
    const [impl, transport, workload, count] = process.argv.slice(ops + 1) as [ImplName, IndependentTransport, IndependentWorkload, string];
    void runOps(impl, transport, workload, Number(count)).then(() => process.exit(0));
  } else if (one !== -1) {
    const [impl, transport, workload] = process.argv.slice(one + 1) as [ImplName, IndependentTransport, IndependentWorkload];
    void measureOne(impl, transport, workload).then((result) => {
      process.stdout.write(JSON.stringify(result));
      process.exit(0);
    });
  } else {
    const cells = runIndependent(
      parseCells(option('--cells')),
      Number(option('--rounds') ?? 3),
      (line) => process.stderr.write(`${line}\n`),
      option('--against'),
    );
    process.stdout.write(`${formatIndependent(cells)}\n`);
  }
}
