/**
 * The workloads, each run for a time budget against one {@link BenchClient}.
 *
 * @packageDocumentation
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { BenchClient } from './adapters';
import { COUNT, ECHO, NOTE, NOTE_PARAMS, REQUEST_CANCELLED, SMALL_PARAMS, WAIT, asciiPayload, objectPayload } from './protocol';

/** The workloads compared. */
export type WorkloadName =
  | 'sequential'
  | 'inflight-100'
  | 'inflight-1000'
  | 'notifications'
  | 'payload-string'
  | 'payload-object'
  | 'cancel';

/** Every workload, in table order. */
export const WORKLOADS: readonly WorkloadName[] = [
  'sequential',
  'inflight-100',
  'inflight-1000',
  'notifications',
  'payload-string',
  'payload-object',
  'cancel',
];

/** Round-trip workloads (the targets and the tracker comparison look at these). */
export const ROUND_TRIP_WORKLOADS: readonly WorkloadName[] = ['sequential', 'inflight-100', 'inflight-1000'];

/** What one run of a workload measured. */
export interface WorkloadResult {
  /** Operations completed (round trips, notifications or cancellations). */
  ops: number;
  /** Wall time in seconds. */
  seconds: number;
  /** Median latency in microseconds (the cancel workload: from `cancel()` to the `-32800`). */
  latencyUs?: number;
  /** Operations that did not end as expected (a wrong count, a cancel that was not `-32800`). */
  failures: number;
}

const MIB = 1024 * 1024;

/**
 * The 1 MiB payload workloads run this many times the budget: a round trip takes 10–40 ms, so a
 * cell of the plain budget held 2–8 of them, and one full collection of the 1 MiB strings (5–10
 * ms) falling in it or not moved the cell by 20–30%.
 */
export const PAYLOAD_BUDGET_FACTOR = 4;
let stringParams: { data: string } | undefined;
let objectParams: { entries: unknown[] } | undefined;

const now = (): number => performance.now();

/** Runs `workload` on `client` for about `budgetMs` (at least one operation). */
export async function runWorkload(client: BenchClient, workload: WorkloadName, budgetMs: number): Promise<WorkloadResult> {
  const start = now();
  const isPayload = workload === 'payload-string' || workload === 'payload-object';
  const deadline = start + budgetMs * (isPayload ? PAYLOAD_BUDGET_FACTOR : 1);
  let counted: { ops: number; failures?: number; latencyUs?: number };
  switch (workload) {
    case 'sequential':
      counted = { ops: await lanes(client, 1, deadline, SMALL_PARAMS) };
      break;
    case 'inflight-100':
      counted = { ops: await lanes(client, 100, deadline, SMALL_PARAMS) };
      break;
    case 'inflight-1000':
      counted = { ops: await lanes(client, 1000, deadline, SMALL_PARAMS) };
      break;
    case 'notifications':
      counted = await notifications(client, deadline);
      break;
    case 'payload-string':
      counted = { ops: await lanes(client, 1, deadline, (stringParams ??= { data: asciiPayload(MIB) })) };
      break;
    case 'payload-object':
      counted = { ops: await lanes(client, 1, deadline, (objectParams ??= objectPayload(MIB))) };
      break;
    case 'cancel':
      counted = await cancellations(client, deadline);
      break;
  }
  return { failures: 0, ...counted, seconds: (now() - start) / 1000 };
}

/** `width` concurrent lanes of back-to-back echo requests until the deadline. */
async function lanes(client: BenchClient, width: number, deadline: number, params: unknown): Promise<number> {
  let ops = 0;
  const lane = async (): Promise<void> => {
    do {
      await client.request(ECHO, params);
      ops++;
    } while (now() < deadline);
  };
  const all: Promise<void>[] = [];
  for (let i = 0; i < width; i++) all.push(lane());
  await Promise.all(all);
  return ops;
}

/**
 * Notifications in bursts of 1,000 (one event-loop turn between bursts), then one request that
 * returns how many the server received: the time covers their processing by the server.
 */
async function notifications(client: BenchClient, deadline: number): Promise<{ ops: number; failures: number }> {
  await client.request(COUNT);
  let sent = 0;
  do {
    for (let i = 0; i < 1000; i++) client.notify(NOTE, NOTE_PARAMS);
    sent += 1000;
    await nextTurn();
  } while (now() < deadline);
  const received = (await client.request(COUNT)) as number;
  return { ops: received, failures: received === sent ? 0 : 1 };
}

/**
 * A request the server holds until cancelled; an echo round trip makes sure it arrived; then
 * the time from `cancel()` to the `-32800` answer.
 */
async function cancellations(client: BenchClient, deadline: number): Promise<{ ops: number; failures: number; latencyUs: number }> {
  const latencies: number[] = [];
  let failures = 0;
  do {
    const call = client.startCancellable(WAIT, SMALL_PARAMS);
    await client.request(ECHO, SMALL_PARAMS);
    const t0 = now();
    call.cancel();
    const code = await call.settled;
    latencies.push((now() - t0) * 1000);
    if (code !== REQUEST_CANCELLED) failures++;
  } while (now() < deadline);
  latencies.sort((a, b) => a - b);
  return { ops: latencies.length, failures, latencyUs: latencies[latencies.length >> 1]! };
}
