/**
 * A fixed number of operations of one workload, in process, for instruction counts and profiles:
 * `node dist/bench/ops.js <library> <workload> <warm-up ops> <measured ops>`. It prints the CPU
 * time per measured operation to stderr and exits.
 *
 * @remarks Instructions per operation, deterministic to the instruction on this machine:
 * ```sh
 * count() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
 *   node --single-threaded --predictable-gc-schedule --hash-seed=42 --random-seed=42 \
 *   dist/bench/ops.js acp-wire sequential 20000 "$1" 2>&1 | grep 'I *refs'; }
 * count 5000; count 15000   # (second - first) / 10,000 = instructions per round trip
 * ```
 * The difference of two runs cancels start-up, warm-up and exit. `--single-threaded` keeps the
 * optimizing compiler and the collector on the main thread, `--predictable-gc-schedule` and the
 * fixed seeds make collections and hashing repeat run for run.
 *
 * @packageDocumentation
 */
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { libraryNamed, type BenchClient } from './adapters';
import { COUNT, ECHO, NOTE, NOTE_PARAMS, SMALL_PARAMS, WAIT, asciiPayload, objectPayload } from './protocol';
import type { WorkloadName } from './workloads';

const MIB = 1024 * 1024;

async function lanes(client: BenchClient, width: number, count: number, params: unknown): Promise<void> {
  let left = count;
  const lane = async (): Promise<void> => {
    while (left-- > 0) await client.request(ECHO, params);
  };
  await Promise.all(Array.from({ length: width }, lane));
}

async function run(client: BenchClient, workload: WorkloadName, count: number, payload: () => unknown): Promise<void> {
  switch (workload) {
    case 'sequential':
      return lanes(client, 1, count, SMALL_PARAMS);
    case 'inflight-100':
      return lanes(client, 100, count, SMALL_PARAMS);
    case 'inflight-1000':
      return lanes(client, 1000, count, SMALL_PARAMS);
    case 'payload-string':
    case 'payload-object':
      return lanes(client, 1, count, payload());
    case 'notifications':
      for (let sent = 0; sent < count; sent += 1000) {
        for (let i = 0; i < 1000; i++) client.notify(NOTE, NOTE_PARAMS);
        await nextTurn();
      }
      await client.request(COUNT);
      return;
    case 'cancel':
      for (let i = 0; i < count; i++) {
        const call = client.startCancellable(WAIT, SMALL_PARAMS);
        await client.request(ECHO, SMALL_PARAMS);
        call.cancel();
        await call.settled;
      }
  }
}

async function main(): Promise<void> {
  const [name, workload, warm, measured] = process.argv.slice(2) as [string, WorkloadName, string, string];
  const library = libraryNamed(name);
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  library.serve(toServer, toClient);
  const client = library.client(toClient, toServer);
  let params: unknown;
  const payload = (): unknown => (params ??= workload === 'payload-string' ? { data: asciiPayload(MIB) } : objectPayload(MIB));
  await run(client, workload, Number(warm), payload);
  const before = process.cpuUsage();
  await run(client, workload, Number(measured), payload);
  const used = process.cpuUsage(before);
  process.stderr.write(`${name} ${workload}: ${((used.user + used.system) / Number(measured)).toFixed(2)} CPU µs/op\n`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`ops failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
