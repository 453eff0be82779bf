/**
 * A fixed number of echo round trips over WebSocket on 127.0.0.1, client and server in this
 * process, for CPU profiles and instruction counts of the WebSocket cells (a 1 MiB string, a
 * 1 MiB object, or the small params of the sequential workload):
 * `node [--cpu-prof] dist/bench/ws-ops.js <acp-wire|acp-sdk|raw> <string|object|small> <warm-up ops> <measured ops>`.
 * Prints wall-clock and CPU time per measured round trip and exits.
 *
 * @packageDocumentation
 */
import { WEBSOCKET_ADAPTERS } from './adapters/websocket';
import { ECHO, SMALL_PARAMS, asciiPayload, objectPayload } from './protocol';
import type { LibraryName } from './adapters/types';

const MIB = 1024 * 1024;

const PAYLOADS = {
  string: () => ({ data: asciiPayload(MIB) }),
  object: () => objectPayload(MIB),
  small: () => SMALL_PARAMS,
};

async function main(): Promise<void> {
  const [name, kind, warm, measured] = process.argv.slice(2) as [LibraryName, keyof typeof PAYLOADS, string, string];
  const adapter = WEBSOCKET_ADAPTERS[name];
  if (!adapter || !Object.hasOwn(PAYLOADS, kind))
    throw new Error('usage: ws-ops <acp-wire|acp-sdk|raw> <string|object|small> <warm-up> <ops>');
  const server = await adapter.listen();
  const client = await adapter.client(`ws://127.0.0.1:${server.port}/acp`);
  const params = PAYLOADS[kind]();
  for (let i = 0; i < Number(warm); i++) await client.request(ECHO, params);
  const count = Number(measured);
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) await client.request(ECHO, params);
  const used = process.cpuUsage(cpu);
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  process.stdout.write(
    `${name} ${kind}: ${(wallMs / count).toPrecision(4)} ms wall, ${((used.user + used.system) / 1000 / count).toPrecision(4)} ms CPU per round trip\n`,
  );
  await client.close();
  await server.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`ws-ops failed: ${String((error as Error)?.stack ?? error)}\n`);
    process.exit(1);
  },
);
