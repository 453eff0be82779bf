/**
 * Measures what the idle collector costs a process with a big live heap while a peer keeps one
 * request open: how many full collections it forces and how long they stall the process.
 *
 * @remarks
 * Builds a live heap of `--heap-mib` MiB (default 240) of small objects, opens an in-memory
 * connection pair, sends one request whose handler hands its responder to a timer that answers
 * after `--hold-s` seconds (default 60), and counts the forced full collections (the `gc`
 * performance entries flagged forced) and their total duration until the answer arrives. Nothing
 * else runs. `--library PATH` measures another build of acp-wire (e.g. an older `dist/lib`).
 *
 * Usage: `node -r ts-node/register/transpile-only scripts/idle-collector-cost.ts [--heap-mib 240] [--hold-s 60] [--library PATH]`
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import { positiveOption } from './options';

interface Options {
  heapMib: number;
  holdSeconds: number;
  library: string;
}

function parseOptions(argv: readonly string[]): Options {
  const value = (name: string, fallback: number): number => positiveOption(argv, name, fallback);
  const at = argv.indexOf('--library');
  const library = at === -1 ? join(__dirname, '..', 'lib') : resolve(argv[at + 1]!);
  return { heapMib: value('--heap-mib', 240), holdSeconds: value('--hold-s', 60), library };
}

/** About `mib` MiB of live, small objects (what a real server's heap is made of). */
function buildHeap(mib: number): unknown[] {
  const heap: unknown[] = [];
  // ~95 bytes per object with its array slot and a short string.
  const count = Math.round((mib * 1024 * 1024) / 95);
  for (let i = 0; i < count; i++) heap.push({ i, s: `v${i % 1000}` });
  return heap;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const acp = require(options.library) as typeof import('../lib');
  const heap = buildHeap(options.heapMib);
  (globalThis as { gc?: () => void }).gc?.();
  const { heapUsed } = process.memoryUsage();

  const forced: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const flags = ((entry as { detail?: unknown }).detail as { flags?: number } | undefined)?.flags ?? 0;
      if (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) forced.push(entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });

  const [client, agent] = acp.createConnectionPair();
  agent.onRequest('hold', (_params: unknown, responder) => {
    setTimeout(() => responder.respond({ held: true }), options.holdSeconds * 1000);
  });
  const started = Date.now();
  await client.sendRequest('hold');
  const elapsed = (Date.now() - started) / 1000;
  // Entries are delivered asynchronously: let the last ones arrive.
  await new Promise((resolve) => setTimeout(resolve, 100));
  observer.disconnect();
  await Promise.all([client.close(), agent.close()]);

  const total = forced.reduce((a, b) => a + b, 0);
  const max = forced.length === 0 ? 0 : Math.max(...forced);
  process.stdout.write(
    `node ${process.version}, library ${options.library}\n` +
      `live heap ${(heapUsed / 1024 / 1024).toFixed(0)} MiB (${heap.length} objects), one request held ${elapsed.toFixed(1)} s\n` +
      `forced full collections: ${forced.length}, total stall ${total.toFixed(0)} ms ` +
      `(${((total / (elapsed * 1000)) * 100).toFixed(2)}% of wall time), longest ${max.toFixed(0)} ms\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`idle-collector-cost: ${String(error)}\n`);
  process.exitCode = 1;
});
