/**
 * Command-line options of `npm run bench`.
 *
 * @packageDocumentation
 */
import { LIBRARIES, type LibraryName } from './adapters';
import { TRANSPORTS, type TransportName } from './transports';
import { WORKLOADS, type WorkloadName } from './workloads';

/** The resolved options of one benchmark run. */
export interface BenchOptions {
  mode: 'quick' | 'full';
  /** Measured rounds (a discarded warm-up round comes first). */
  rounds: number;
  /** Time budget of one measured cell, in ms. */
  budgetMs: number;
  /**
   * Time budget of one warm-up cell, in ms: as long as a measured cell, so that every library's
   * hot paths are compiled before the first measured round.
   */
  warmupMs: number;
  libraries: LibraryName[];
  transports: TransportName[];
  workloads: WorkloadName[];
  /** Transports and workloads the no-tracker variant of acp-wire runs. */
  trackerTransports: TransportName[];
  trackerWorkloads: WorkloadName[];
  /** Round trips of the soak (0: skip). */
  soakRoundTrips: number;
  /** Requests held pending at once in the memory test (0: skip). */
  pendingRequests: number;
  /** Lines per framing run (0: skip). */
  framingLines: number;
  /** Interleaved rounds of the start-up measurements (0: skip). */
  startupRounds: number;
  /** Rounds of the resumption cost (resume off and on, alternating; 0: skip). */
  resumeRounds: number;
  /** Rounds of the outside benchmark's workload (`bench/independent.ts`; 0: skip). */
  independentRounds: number;
  /** Its cells, `transport/workload,…` (default: every cell). */
  independentCells: string | undefined;
  /** Another build's `dist` whose acp-wire runs in the same rounds of the outside workload. */
  independentAgainst: string | undefined;
  /**
   * Another build's root (a directory holding its `dist/`, e.g. a copy of `dist` made before a
   * change): its chains are timed to the first answer in the same rounds. Default: none.
   */
  startupAgainst: string | undefined;
  /** Idle clients of the in-process hosting measurement (`serve --agent-module`; 0: skip the hosting measurements). */
  hostingClients: number;
  /** Idle clients of the process-per-client hosting measurement. */
  hostingProcesses: number;
  /** The most idle clients the hosting capacity run opens on one serve (0: skip it). */
  hostingMax: number;
  /** Where to write the JSON report, if anywhere. */
  jsonFile: string | undefined;
}

/** The usage text printed for `--help` and with a bad option. */
export const USAGE = `usage: npm run bench -- [--full] [--json FILE] [--rounds N] [--budget MS]
       [--libs a,b] [--transports a,b] [--workloads a,b] [--soak N] [--pending N] [--framing N]
       [--startup N] [--startup-against DIR] [--hosting N] [--hosting-processes N] [--hosting-max N] [--resume N]
       [--independent N] [--independent-cells t/w,…] [--independent-against DIST]
  --full        7 rounds of 400 ms cells, a 1,000,000 round-trip soak, tracker cost on every transport
  --json FILE   also write the results as JSON
  --soak N      round trips of the heap soak (0 skips it); --pending N, --framing N likewise
  --startup N   interleaved rounds of the start-up measurements (0 skips them; 10, --full 30)
  --startup-against DIR  also time the chains of the build in DIR/dist, in the same rounds
  --hosting N   memory per idle client of serve with N (default 1000; 0 skips it all) clients of an
                in-process agent module, beside --hosting-processes N (default 10) clients of an
                agent process each, and how many idle clients one serve holds, up to
                --hosting-max N (default 5000; 0 skips it)

  --resume N    rounds of the resumption cost on WebSocket and HTTP (0 skips it; 3, --full 7)
  --independent N  rounds of the outside benchmark's workload, acp-wire against raw, a fresh process
                per cell (0 skips it; 0, --full 3); --independent-cells in-process/notify,tcp/seq
                picks cells (transports in-process, tcp, stdio; workloads seq, conc100, notify,
                bigstr, bigobj); --independent-against DIST adds the acp-wire of the build in DIST`;

function list<T extends string>(value: string, allowed: readonly T[], name: string): T[] {
  const items = value.split(',').filter(Boolean) as T[];
  for (const item of items) if (!allowed.includes(item)) throw new RangeError(`${name}: unknown ${item}; one of ${allowed.join(', ')}`);
  return items;
}

function count(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer`);
  return n;
}

function defaults(full: boolean): BenchOptions {
  return {
    mode: full ? 'full' : 'quick',
    rounds: full ? 7 : 3,
    budgetMs: full ? 400 : 80,
    warmupMs: full ? 400 : 80,
    libraries: LIBRARIES.map((library) => library.name),
    transports: [...TRANSPORTS],
    workloads: [...WORKLOADS],
    trackerTransports: full ? [...TRANSPORTS] : ['in-process'],
    trackerWorkloads: full ? [...WORKLOADS] : ['sequential', 'inflight-100', 'inflight-1000', 'cancel'],
    soakRoundTrips: full ? 1_000_000 : 100_000,
    pendingRequests: 10_000,
    framingLines: full ? 200_000 : 50_000,
    startupRounds: full ? 30 : 10,
    resumeRounds: full ? 7 : 3,
    independentRounds: full ? 3 : 0,
    independentCells: undefined,
    independentAgainst: undefined,
    startupAgainst: undefined,
    hostingClients: 1000,
    hostingProcesses: 10,
    hostingMax: 5000,
    jsonFile: undefined,
  };
}

/** Parses `argv` (without node and the script). @throws RangeError for a bad option */
export function parseOptions(argv: string[]): BenchOptions {
  const options = defaults(argv.includes('--full'));
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--full') continue;
    const value = argv[++i];
    if (value === undefined) throw new RangeError(`${flag} needs a value\n${USAGE}`);
    if (flag === '--json') options.jsonFile = value;
    else if (flag === '--rounds') options.rounds = Math.max(1, count(value, flag));
    else if (flag === '--budget') options.budgetMs = options.warmupMs = Math.max(1, count(value, flag));
    else if (flag === '--libs')
      options.libraries = list(
        value,
        LIBRARIES.map((l) => l.name),
        flag,
      );
    else if (flag === '--transports') options.transports = list(value, TRANSPORTS, flag);
    else if (flag === '--workloads') options.workloads = list(value, WORKLOADS, flag);
    else if (flag === '--soak') options.soakRoundTrips = count(value, flag);
    else if (flag === '--pending') options.pendingRequests = count(value, flag);
    else if (flag === '--framing') options.framingLines = count(value, flag);
    else if (flag === '--startup') options.startupRounds = count(value, flag);
    else if (flag === '--startup-against') options.startupAgainst = value;
    else if (flag === '--hosting') options.hostingClients = count(value, flag);
    else if (flag === '--hosting-processes') options.hostingProcesses = count(value, flag);
    else if (flag === '--hosting-max') options.hostingMax = count(value, flag);
    else if (flag === '--resume') options.resumeRounds = count(value, flag);
    else if (flag === '--independent') options.independentRounds = count(value, flag);
    else if (flag === '--independent-cells') options.independentCells = value;
    else if (flag === '--independent-against') options.independentAgainst = value;
    else throw new RangeError(`unknown option ${flag}\n${USAGE}`);
  }
  options.trackerTransports = options.trackerTransports.filter((t) => options.transports.includes(t));
  if (!options.libraries.includes('acp-wire')) options.trackerTransports = [];
  return options;
}
