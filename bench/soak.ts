/**
 * The heap soak: acp-wire round trips over an in-process pair, 100 in flight, with a full
 * collection at checkpoints; one request in 50 carries an AbortSignal and one in 100 is cancelled
 * mid-flight, so the pending map, trackers, cancellation state and listeners are all exercised.
 * Run as `node --expose-gc dist/bench/soak.js <roundTrips>`.
 *
 * @packageDocumentation
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createConnectionPair, type Connection } from '../lib';
import { ECHO, SMALL_PARAMS, WAIT } from './protocol';

/** What the soak measured. */
export interface SoakResult {
  roundTrips: number;
  /** Heap after a full collection at each checkpoint (the first after a warm-up), in bytes. */
  samples: number[];
  /** Last sample minus first, in bytes. */
  growthBytes: number;
  /** Least-squares slope of the samples, in bytes per 1,000 round trips. */
  slopePerThousand: number;
  /** Pending and in-flight counts left at the end on both sides (all should be 0). */
  leftOver: number;
  seconds: number;
}

async function heapAfterGc(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  await nextTurn();
  await nextTurn();
  gc();
  return process.memoryUsage().heapUsed;
}

function serve(agent: Connection): void {
  agent.onRequest(ECHO, (params: unknown) => params ?? null);
  agent.onRequest(WAIT, (_params, responder) => {
    responder.signal.addEventListener('abort', () => responder.respondCancelled(), { once: true });
  });
}

async function oneRoundTrip(client: Connection, n: number): Promise<void> {
  if (n % 100 === 0) {
    const sent = client.sendRequest(WAIT, SMALL_PARAMS);
    await client.sendRequest(ECHO, SMALL_PARAMS);
    sent.cancel();
    await sent.then(undefined, () => undefined);
  } else if (n % 50 === 0) {
    await client.sendRequest(ECHO, SMALL_PARAMS, { signal: new AbortController().signal });
  } else {
    await client.sendRequest(ECHO, SMALL_PARAMS);
  }
}

async function run(client: Connection, count: number, width = 100): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await oneRoundTrip(client, next++);
  };
  await Promise.all(Array.from({ length: width }, lane));
}

function slope(samples: number[], step: number): number {
  const n = samples.length;
  const meanX = ((n - 1) / 2) * step;
  const meanY = samples.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  samples.forEach((y, i) => {
    num += (i * step - meanX) * (y - meanY);
    den += (i * step - meanX) ** 2;
  });
  return den === 0 ? 0 : (num / den) * 1000;
}

async function main(): Promise<void> {
  const roundTrips = Number(process.argv[2]);
  const [client, agent] = createConnectionPair();
  serve(agent);
  await run(client, 50_000); // warm-up: compiled code and grown tables are not a leak
  const checkpoints = 20;
  const step = Math.max(1, Math.floor(roundTrips / checkpoints));
  const samples = [await heapAfterGc()];
  const start = performance.now();
  for (let done = 0; done < roundTrips; done += step) {
    await run(client, Math.min(step, roundTrips - done));
    samples.push(await heapAfterGc());
  }
  const seconds = (performance.now() - start) / 1000;
  const leftOver = client.pendingCount + client.inflightCount + agent.pendingCount + agent.inflightCount;
  await Promise.all([client.close(), agent.close()]);
  const result: SoakResult = {
    roundTrips,
    samples,
    growthBytes: samples[samples.length - 1]! - samples[0]!,
    slopePerThousand: slope(samples, step),
    leftOver,
    seconds,
  };
  process.send!(result);
  process.disconnect();
}

void main();
