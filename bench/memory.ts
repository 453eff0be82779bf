/**
 * The cost of many requests pending at once, on both sides: a client (this process) sends
 * `count` requests that a server process holds, and both report their heap after a full
 * collection. Run by the runner as `node --expose-gc dist/bench/memory.js <library> <count>`.
 *
 * @packageDocumentation
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { libraryNamed, type BenchClient } from './adapters';
import { HOLD, RELEASE, SMALL_PARAMS, settledHeap } from './protocol';
import { openHarness, type Harness } from './transports';

/** What the memory test measured for one library. */
export interface PendingCost {
  library: string;
  requests: number;
  /** Client heap growth per pending request, in bytes (user's awaiting promise included). */
  clientBytesEach: number;
  /** Server heap growth per held request, in bytes. */
  serverBytesEach: number;
  /** Client and server heap after every request was answered, minus before, in bytes. */
  clientAfterRelease: number;
  serverAfterRelease: number;
}

/** Waits until the server holds `held` requests, then collects there and returns its heap. */
async function serverHeapWhenHolding(harness: Harness, held: number): Promise<number> {
  while ((await harness.remoteStats(false))!.held !== held) await nextTurn();
  return (await harness.remoteStats(true))!.heapUsed;
}

function holdMany(client: BenchClient, count: number): Promise<unknown>[] {
  const answers: Promise<unknown>[] = [];
  const ignore = (): void => {};
  for (let i = 0; i < count; i++) answers.push(Promise.resolve(client.request(HOLD, SMALL_PARAMS)).then(ignore, ignore));
  return answers;
}

async function measure(harness: Harness, count: number): Promise<Omit<PendingCost, 'library'>> {
  const server0 = await serverHeapWhenHolding(harness, 0);
  const client0 = await settledHeap();
  let answers = holdMany(harness.client, count);
  const server1 = await serverHeapWhenHolding(harness, count);
  const client1 = await settledHeap();
  harness.client.notify(RELEASE);
  await Promise.all(answers);
  answers = [];
  const server2 = await serverHeapWhenHolding(harness, 0);
  const client2 = await settledHeap();
  return {
    requests: count,
    clientBytesEach: (client1 - client0) / count,
    serverBytesEach: (server1 - server0) / count,
    clientAfterRelease: client2 - client0,
    serverAfterRelease: server2 - server0,
  };
}

async function main(): Promise<void> {
  const [name, countText] = process.argv.slice(2) as [string, string];
  const count = Number(countText);
  const harness = await openHarness(libraryNamed(name), 'child-stdio', { nodeFlags: ['--expose-gc'] });
  await measure(harness, count); // warm-up: compiled code, grown tables
  const result = await measure(harness, count);
  await harness.close();
  process.send!({ library: name, ...result } satisfies PendingCost);
  process.disconnect();
}

void main();
