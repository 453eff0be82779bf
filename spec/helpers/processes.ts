/**
 * Processes in specs: the repository root, the compiled peers (built once when stale), and spawned
 * node scripts or TypeScript fixtures spoken to with raw NDJSON lines. Everything a spec spawns is
 * stopped by {@link stopAll} if the spec did not stop it. (What runs on the machine: process-table.ts.)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { LineReader, requestLine, writeLines } from './lines';

/** The repository root (processes run from here, so ts-node finds tsconfig.json). */
export const ROOT = resolve(__dirname, '..', '..');

/** The compiled conformance agent (examples/conformance-agent.ts). */
export const CONFORMANCE_AGENT = join(ROOT, 'dist', 'examples', 'conformance-agent.js');
/** The compiled passthrough proxy (examples/passthrough-proxy.ts). */
export const PASSTHROUGH_PROXY = join(ROOT, 'dist', 'examples', 'passthrough-proxy.js');
/** The compiled command line (bin/acp-wire.ts). */
export const CLI = join(ROOT, 'dist', 'bin', 'acp-wire.js');

const BUILT = [CONFORMANCE_AGENT, PASSTHROUGH_PROXY, CLI];
let isBuilt = false;

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds the project (`npx tsc -p .`, then the steps `npm run build` runs after it) when a compiled peer is missing or older than a source in
 * lib/, examples/ or bin/; at most once per test run. Specs call it through {@link useBuild}.
 *
 * @remarks A type error elsewhere does not stop tsc from emitting (`npm run typecheck` reports
 * those): the check afterwards is only that every compiled peer is fresh. `npm test` runs spec
 * files in parallel worker processes: the build holds a lock directory, so one worker builds while
 * the others wait and then find dist/ fresh (nobody spawns a half-written peer).
 */
export function ensureBuilt(): void {
  if (isBuilt) return;
  const sources = Math.max(...['lib', 'examples', 'bin'].map((dir) => newestSource(join(ROOT, dir))));
  const isFresh = (): boolean => BUILT.every((file) => existsSync(file) && statSync(file).mtimeMs >= sources);
  if (!isFresh())
    withBuildLock(() => {
      if (isFresh()) return; // another worker built while this one waited
      const result = spawnSync('npx', ['tsc', '-p', '.'], { cwd: ROOT, encoding: 'utf8' });
      // The rest of `npm run build` (the lazy root index, the bundles), as package.json lists it.
      if (result.status === 0 || isFresh())
        for (const [program, ...args] of afterTsc()) spawnSync(program!, args, { cwd: ROOT, stdio: 'inherit' });
      if (!isFresh())
        throw new Error(
          `the build did not produce fresh ${BUILT.map((file) => relative(ROOT, file)).join(', ')}:\n${result.stdout}${result.stderr}`,
        );
    });
  isBuilt = true;
}

/**
 * The steps of package.json's `build` script after `tsc -p .`, in order, each as its words (they are
 * plain `node …` commands). @throws if the script no longer starts with `tsc -p .`
 */
function afterTsc(): string[][] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } };
  const [first, ...rest] = pkg.scripts.build.split(' && ');
  if (first !== 'tsc -p .') throw new Error(`package.json's build script no longer starts with \`tsc -p .\`: ${pkg.scripts.build}`);
  return rest.map((step) => step.split(' '));
}
const BUILD_LOCK = join(ROOT, 'node_modules', '.cache', 'acp-wire-build.lock');
/** Longer than a cold build takes: a lock this old was left by a killed run. */
const BUILD_LOCK_STALE_MS = 180_000;

function withBuildLock(build: () => void): void {
  mkdirSync(dirname(BUILD_LOCK), { recursive: true });
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(BUILD_LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = Date.now() - (statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > BUILD_LOCK_STALE_MS) rmSync(BUILD_LOCK, { recursive: true, force: true });
    else Atomics.wait(sleeper, 0, 0, 100); // a synchronous sleep: mocha's before hook waits here
  }
  try {
    build();
  } finally {
    rmSync(BUILD_LOCK, { recursive: true, force: true });
  }
}

/**
 * Registers a `before` hook that runs {@link ensureBuilt} (with a timeout a cold build fits in):
 * call it at the top of every spec that runs dist/ or a fixture.
 */
export function useBuild(): void {
  before(function () {
    this.timeout(180_000);
    ensureBuilt();
  });
}

/**
 * The node arguments that run `spec/fixtures/<fixture>.ts` (transpile only) with `args`.
 *
 * @throws Error unless {@link ensureBuilt} ran in this process: the fixtures run the compiled
 * library (see spec/fixtures/compiled-library.ts), which must not be missing or stale.
 */
export function fixtureArgs(fixture: string, args: readonly string[] = []): string[] {
  if (!isBuilt) throw new Error(`spec/fixtures/${fixture}.ts runs the compiled library: call ensureBuilt() in a before hook first`);
  return ['-r', 'ts-node/register/transpile-only', join(ROOT, 'spec', 'fixtures', `${fixture}.ts`), ...args];
}

/** The environment for spawned processes: this process's, minus `ACP_WIRE_LOG`, plus `env`. */
export function fixtureEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.ACP_WIRE_LOG;
  return { ...base, ...env };
}

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options of {@link spawnScript} and {@link spawnFixture}. */
export interface SpawnOptions {
  /** Added to the environment (see {@link fixtureEnv}). */
  env?: NodeJS.ProcessEnv;
  /** Node options before the script, e.g. `['--expose-gc']`. */
  nodeArgs?: readonly string[];
}

/** A spawned node process with piped stdio, spoken to with raw NDJSON lines. */
export interface SpawnedProcess {
  readonly child: ChildProcess;
  /** Its stdout lines. */
  readonly stdout: LineReader;
  /** Its stderr lines (and `stderr.text`, all of it). */
  readonly stderr: LineReader;
  /** Resolves once it has exited. */
  readonly exited: Promise<Exit>;
  /** Writes each item as one line to its stdin (a string as it is, anything else as JSON). */
  send(...items: unknown[]): void;
  /** Sends a request and resolves with the exact line of its response (taken from stdout). */
  request(id: number | string, method: string, params?: unknown): Promise<string>;
  /** Ends its stdin and resolves once it has exited; SIGKILLs it after `graceMs`, so a hang fails loudly. */
  stop(graceMs?: number): Promise<Exit>;
}

const running = new Set<SpawnedProcess>();

/** Spawns `node [nodeArgs] script ...args` from the repository root. Stop it with `stop()` or {@link stopAll}. */
export function spawnScript(script: string, args: readonly string[] = [], options: SpawnOptions = {}): SpawnedProcess {
  return spawnNode([...(options.nodeArgs ?? []), script, ...args], basename(script), options.env);
}

/** Spawns `spec/fixtures/<fixture>.ts` under ts-node (transpile only). Stop it with `stop()` or {@link stopAll}. */
export function spawnFixture(fixture: string, args: readonly string[] = [], options: SpawnOptions = {}): SpawnedProcess {
  return spawnNode([...(options.nodeArgs ?? []), ...fixtureArgs(fixture, args)], fixture, options.env);
}

function spawnNode(argv: readonly string[], name: string, env?: NodeJS.ProcessEnv): SpawnedProcess {
  const child = spawn(process.execPath, argv, { cwd: ROOT, env: fixtureEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.on('error', () => {}); // EPIPE once the child has exited
  const stdout = new LineReader(child.stdout!, { label: `${name} stdout` });
  const exited = new Promise<Exit>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const spawned: SpawnedProcess = {
    child,
    stdout,
    stderr: new LineReader(child.stderr!, { label: `${name} stderr` }),
    exited,
    send: (...items) => writeLines(child.stdin!, ...items),
    request: (id, method, params) => requestLine(child.stdin!, stdout, id, method, params),
    stop: (graceMs = 5000) => stopProcess(spawned, graceMs),
  };
  running.add(spawned);
  void exited.then(() => running.delete(spawned));
  return spawned;
}

async function stopProcess({ child, exited }: SpawnedProcess, graceMs: number): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Stops every process spawned here that is still running (for `after`/`afterEach` hooks). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((spawned) => spawned.stop(2000)));
}

/** Resolves once `child` has exited and its stdio streams have closed, with its exit code and signal. */
export function childClosed(child: ChildProcess): Promise<Exit> {
  const isStdioClosed = child.stdio.every((stream) => stream === null || (stream as { closed?: boolean }).closed === true);
  if ((child.exitCode !== null || child.signalCode !== null) && isStdioClosed) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((done) => child.once('close', (code, signal) => done({ code, signal })));
}

/**
 * `node` arguments for a wrapper like a package's launcher script around a native binary: it
 * starts a grandchild that ignores the end of its stdin and shares the wrapper's stdio, writes
 * `grandchild PID` on stderr, and lives as long as the grandchild (exiting with its code).
 */
export const WRAPPER_ARGS: readonly string[] = [
  '-e',
  [
    "const { spawn } = require('node:child_process');",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the child's own template literal
    "const grandchild = spawn(process.execPath, ['-e', 'process.stderr.write(`grandchild ${process.pid}\\\\n`); setInterval(() => {}, 1e6)'], { stdio: 'inherit' });",
    "grandchild.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));",
  ].join('\n'),
];
