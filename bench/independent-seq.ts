/**
 * The in-process sequential cell as the outside side-by-side benchmark runs it
 * (`bench-independent.md`): a fresh process per implementation and round, client and server in one
 * thread over two `PassThrough` streams, 1,000 warm-up requests, then `await` one echo of `small`
 * at a time for 2 s; round trips per second and CPU µs per round trip (`process.cpuUsage()`
 * around the window). acp-wire's side is two default `new Connection(readable, writable)`, the
 * server's `onRequest('_bench/echo', (p) => p)`; raw is `JSON.stringify` + `write`, a
 * chunk-scanning reader and a `Map` of pending ids. 3 rounds, order shuffled per round; medians.
 *
 * @example
 * ```sh
 * npm run build && node dist/bench/independent-seq.js            # both, 3 rounds
 * node dist/bench/independent-seq.js --one acp-wire              # one measurement, JSON
 * ```
 *
 * @packageDocumentation
 */
import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { Connection } from '../lib';

const SMALL = { textDocument: { uri: 'file:///repo/src/index.ts' }, position: { line: 120, character: 17 } };
const WARM_UP = 1000;
const WINDOW_MS = 2000;

type Request = (method: string, params: unknown) => Promise<unknown>;

function acpWirePair(): Request {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = new Connection(toServer, toClient);
  server.onRequest('_bench/echo', (params) => params);
  const client = new Connection(toClient, toServer);
  return (method, params) => client.sendRequest(method, params as never) as unknown as Promise<unknown>;
}

/** Reads NDJSON as the outside raw baseline does: Buffer chunks, a scan per chunk, one concat per line. */
function onLines(
  stream: PassThrough,
  onMessage: (message: { id: number; method?: string; params?: unknown; result?: unknown }) => void,
): void {
  let pending: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, end));
      onMessage(JSON.parse(Buffer.concat(pending).toString()));
      pending = [];
      start = end + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  });
}

function rawPair(): Request {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  onLines(toServer, (message) => toClient.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: message.params })}\n`));
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  onLines(toClient, (message) => {
    const entry = waiting.get(message.id);
    waiting.delete(message.id);
    entry?.resolve(message.result);
  });
  let nextId = 0;
  return (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      toServer.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
}

async function measure(name: string): Promise<{ perSecond: number; cpuMicros: number }> {
  const request = name === 'raw' ? rawPair() : acpWirePair();
  for (let i = 0; i < WARM_UP; i++) await request('_bench/echo', SMALL);
  const cpu = process.cpuUsage();
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < WINDOW_MS) {
    await request('_bench/echo', SMALL);
    count++;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { perSecond: count / seconds, cpuMicros: (used.user + used.system) / count };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

function main(): void {
  const names = ['acp-wire', 'raw'];
  const results = new Map(names.map((name) => [name, [] as { perSecond: number; cpuMicros: number }[]]));
  for (let round = 0; round < 3; round++) {
    for (const name of [...names].sort(() => Math.random() - 0.5)) {
      const run = spawnSync(process.execPath, [__filename, '--one', name], { encoding: 'utf8' });
      results.get(name)!.push(JSON.parse(run.stdout));
    }
  }
  const row = (name: string) => ({
    perSecond: median(results.get(name)!.map((r) => r.perSecond)),
    cpuMicros: median(results.get(name)!.map((r) => r.cpuMicros)),
  });
  const [acp, raw] = [row('acp-wire'), row('raw')];
  process.stdout.write(
    `acp-wire ${acp.perSecond.toFixed(0)}/s, ${acp.cpuMicros.toFixed(2)} µs CPU; raw ${raw.perSecond.toFixed(0)}/s, ` +
      `${raw.cpuMicros.toFixed(2)} µs CPU; speed ${(acp.perSecond / raw.perSecond).toFixed(2)}× raw, CPU ${(raw.cpuMicros / acp.cpuMicros).toFixed(2)}×\n`,
  );
}

const one = process.argv.indexOf('--one');
if (one !== -1) void measure(process.argv[one + 1]!).then((result) => process.stdout.write(JSON.stringify(result)));
else main();
