/**
 * `npm run soak`: the long versions of the race soak and the kill runs.
 *
 * Runs spec/soak/*.spec.ts and spec/faults/kill.spec.ts under mocha with larger counts than the
 * default `npm test` run: 20,000 requests in memory (10,000 from each side), 10,000 over a child
 * process (5,000 each way), 10,000 through the conductor with two proxies, and 30 seeded kills.
 * The mocha exit code is this script's.
 *
 * Usage: `npm run soak [-- --requests N] [-- --seed S] [-- --kills K]` (N is the per-scenario
 * total; the in-memory soak uses 2N).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value <= 0) {
    process.stderr.write(`--${name} needs a positive integer\n`);
    process.exit(2);
  }
  return value;
}

const requests = option('requests', 10_000);
const seed = option('seed', Date.now() % 100_000);
const kills = option('kills', 30);
const even = requests - (requests % 2);
const root = path.join(__dirname, '..');

process.stderr.write(`soak: ${even} requests per scenario (in memory ${2 * even}), seed ${seed}, ${kills} kills\n`);
const started = Date.now();
const result = spawnSync(
  process.execPath,
  [require.resolve('mocha/bin/mocha.js'), 'spec/soak/*.spec.ts', 'spec/faults/kill.spec.ts', '--timeout', '0'],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      SOAK_REQUESTS: String(2 * even),
      SOAK_CHAIN_REQUESTS: String(even),
      SOAK_CHILD_REQUESTS: String(even),
      SOAK_SEED: String(seed),
      KILL_RUNS: String(kills),
      KILL_SEED: String(seed),
    },
  },
);
process.stderr.write(`soak: done in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${seed})\n`);
process.exitCode = result.status ?? 1;
