/**
 * Measures how long an otherwise idle agent process takes to answer a request whose handler dropped
 * its responder, with the idle collector on (the default) and off
 * (`configureIdleCollection({ enabled: false })`).
 *
 * @remarks
 * For each run it spawns a fresh agent on stdio (the compiled library in `dist/lib` when built,
 * else the TypeScript sources through ts-node), waits for a `ping` round trip, then sends `drop`
 * and times the automatic `-32603` answer. With the collector off, the wait is bounded (`--limit`).
 * Nothing but this measurement runs in the agent, and the parent process does the timing.
 *
 * Usage: `node -r ts-node/register/transpile-only scripts/idle-latency.ts [--runs 3] [--limit 30000] [--ts]`
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RpcError, spawnConnection } from '../lib';
import { positiveOption } from './options';

type Mode = 'on' | 'off';

interface Options {
  runs: number;
  limitMs: number;
  /** Run the agent from the TypeScript sources even when `dist/lib` is built (`--ts`). */
  fromSources: boolean;
}

const ROOT = join(__dirname, '..');
const COMPILED = join(ROOT, 'dist', 'lib', 'index.js');

/** The agent: answers `ping`, drops the responder of `drop`; the collector is off in mode `off`. */
function agentSource(library: string, mode: Mode): string {
  return [
    `const { connectStdio, configureIdleCollection } = require(${JSON.stringify(library)});`,
    mode === 'off' ? 'configureIdleCollection({ enabled: false });' : '',
    'const connection = connectStdio();',
    "connection.onRequest('ping', () => 'pong');",
    "connection.onRequest('drop', () => undefined);",
  ].join('\n');
}

function parseOptions(argv: readonly string[]): Options {
  const value = (name: string, fallback: number): number => positiveOption(argv, name, fallback);
  return { runs: value('--runs', 3), limitMs: value('--limit', 30_000), fromSources: argv.includes('--ts') || !existsSync(COMPILED) };
}

/** One run: milliseconds until the automatic answer, or `undefined` if none came within the limit. */
async function measureOnce(mode: Mode, options: Options): Promise<number | undefined> {
  const { limitMs, fromSources } = options;
  const args = fromSources
    ? ['-r', 'ts-node/register/transpile-only', '-e', agentSource(join(ROOT, 'lib'), mode)]
    : ['-e', agentSource(COMPILED, mode)];
  const agent = spawnConnection(process.execPath, args, { cwd: ROOT, stderr: 'inherit' });
  try {
    await agent.connection.sendRequest('ping');
    const started = performance.now();
    const sent = agent.connection.sendRequest('drop');
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), limitMs)));
    const answered = sent.then(
      () => performance.now() - started,
      (error: unknown) => {
        if (!(error instanceof RpcError) || error.code !== -32603) throw error;
        return performance.now() - started;
      },
    );
    const elapsed = await Promise.race([answered, limit]);
    clearTimeout(timer);
    if (elapsed === undefined) sent.detach();
    return elapsed;
  } finally {
    await agent.close();
  }
}

function summarize(mode: Mode, samples: (number | undefined)[], limitMs: number): string {
  const shown = samples.map((ms) => (ms === undefined ? `>${limitMs}` : ms.toFixed(0))).join(', ');
  const answered = samples.filter((ms): ms is number => ms !== undefined).sort((a, b) => a - b);
  const median = answered.length === 0 ? 'n/a' : answered[Math.floor(answered.length / 2)]!.toFixed(0);
  return `idle collector ${mode.padEnd(3)}: runs [${shown}] ms; answered ${answered.length}/${samples.length}; median of answered ${median} ms`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const library = options.fromSources ? 'lib (ts-node, transpile-only)' : 'dist/lib (compiled)';
  process.stdout.write(`node ${process.version}, library ${library}, ${options.runs} runs per mode, limit ${options.limitMs} ms\n`);
  for (const mode of ['on', 'off'] as const) {
    const samples: (number | undefined)[] = [];
    for (let run = 0; run < options.runs; run++) samples.push(await measureOnce(mode, options));
    process.stdout.write(`${summarize(mode, samples, options.limitMs)}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`idle-latency: ${String(error)}\n`);
  process.exitCode = 1;
});
