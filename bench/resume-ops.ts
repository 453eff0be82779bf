/**
 * A fixed number of echo round trips over acp-wire's WebSocket or Streamable HTTP, client and
 * server in this process on 127.0.0.1, resumption off or on: for CPU profiles and instruction
 * counts of the cells of `bench/resume.ts`.
 * `node [--cpu-prof] dist/bench/resume-ops.js <websocket|http> <sequential|inflight-100> <off|on> <warm-up ops> <measured ops> [liveness ms]`.
 * Prints the CPU time per measured round trip to stderr and exits. Without `liveness ms` nothing
 * watches the peer; with it, a WebSocket's heartbeat pings that often at both ends (timeout a
 * minute), and a resumable Streamable HTTP client sends heartbeats that often and looks for silent
 * requests every one (`silenceMs` four times it).
 *
 * @remarks Instructions per round trip, repeatable under load (see `bench/ops.ts`):
 * ```sh
 * count() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
 *   node --single-threaded --predictable-gc-schedule --hash-seed=42 --random-seed=42 \
 *   dist/bench/resume-ops.js websocket sequential on 5000 "$1" 2>&1 | grep 'I *refs'; }
 * count 2000; count 18000   # (second - first) / 16,000 = instructions per round trip
 * ```
 * (HTTP: 1,000 and 9,000; its figures move by ±5,000 with where the collector runs, so take a
 * median of several pairs.)
 *
 * @packageDocumentation
 */
import { type Connection, connectHttp, connectWebSocket, listenRemote } from '../lib';
import { ECHO, SMALL_PARAMS } from './protocol';

async function lanes(client: Connection, width: number, count: number): Promise<void> {
  let left = count;
  const lane = async (): Promise<void> => {
    while (left-- > 0) await client.sendRequest(ECHO, SMALL_PARAMS);
  };
  await Promise.all(Array.from({ length: width }, lane));
}

async function main(): Promise<void> {
  const [transport, workload, mode, warm, measured, liveness] = process.argv.slice(2);
  if (
    (transport !== 'websocket' && transport !== 'http') ||
    (workload !== 'sequential' && workload !== 'inflight-100') ||
    (mode !== 'off' && mode !== 'on')
  )
    throw new Error('usage: resume-ops <websocket|http> <sequential|inflight-100> <off|on> <warm-up ops> <measured ops> [liveness ms]');
  const isResumable = mode === 'on';
  const livenessMs = liveness === undefined ? undefined : Number(liveness);
  const heartbeat = livenessMs === undefined ? false : { intervalMs: livenessMs, timeoutMs: 60_000 };
  const listener = await listenRemote({ heartbeat, resume: isResumable }, (connection) => {
    connection.onRequest('initialize', () => ({ protocolVersion: 2, capabilities: {} }));
    connection.onRequest(ECHO, (params: unknown) => params ?? null);
  });
  const reconnect = !isResumable ? undefined : livenessMs === undefined ? {} : { heartbeatMs: livenessMs, silenceMs: 4 * livenessMs };
  const client =
    transport === 'websocket'
      ? await connectWebSocket(listener.url, { heartbeat, reconnect })
      : connectHttp(listener.httpUrl, { reconnect });
  await client.sendRequest('initialize', { protocolVersion: 2 });
  const width = workload === 'sequential' ? 1 : 100;
  await lanes(client, width, Number(warm));
  const before = process.cpuUsage();
  await lanes(client, width, Number(measured));
  const used = process.cpuUsage(before);
  process.stderr.write(`${transport} ${workload} resume ${mode}: ${((used.user + used.system) / Number(measured)).toFixed(2)} CPU µs/op\n`);
  await client.close();
  await listener.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`resume-ops failed: ${String((error as Error)?.stack ?? error)}\n`);
    process.exit(1);
  },
);
