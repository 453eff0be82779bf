/**
 * The cancellation race: two connections that each send requests to, and serve, the
 * other, with random cancels from both sides (cancel(), a retained handle, an AbortSignal, a
 * forwarded AbortSignal; before, around and after settlement) and random handler reactions (ignore,
 * cooperate, finish early, drop the responder, throw). Deterministic: a seeded PRNG drives every
 * choice and handlers wait in macrotasks, never in wall-clock time. The exact lines on both streams
 * are counted with taps.
 */
import { expect } from 'chai';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RpcError, type Connection, type Responder } from '../../lib';
import type { LineReader } from '../helpers/lines';
import { isCancelFor, isResponse, type WireMessage } from '../helpers/messages';
import { tappedPair } from '../helpers/peers';
import { seededRandom } from '../helpers/random';

const REQUESTS_PER_SIDE = 5_000;
const BATCH = 250;
const SEED = 0x5eed_0003;

type Mode = 'ignore' | 'cooperate' | 'partial' | 'drop' | 'throw';
const MODES: readonly Mode[] = ['ignore', 'cooperate', 'partial', 'drop', 'throw'];
type Via = 'cancel' | 'handle' | 'abort' | 'forwarded';
const VIAS: readonly Via[] = ['cancel', 'handle', 'abort', 'forwarded'];

interface RaceParams {
  mode: Mode;
  ticks: number;
}

/** One cancellation attempt: what it returned (abort signals return nothing) and whether the request had settled. */
interface Attempt {
  returned: boolean | undefined;
  wasSettled: boolean;
}

interface Sent {
  id: number;
  attempts: Attempt[];
  outcomes: number;
}

/** Waits `ticks` macrotasks, or less if `stopEarly` says so; resolves with whether it stopped early. */
async function waitTicks(ticks: number, stopEarly: () => boolean): Promise<boolean> {
  for (let i = 0; i < ticks; i++) {
    if (stopEarly()) return true;
    await nextTurn();
  }
  return stopEarly();
}

/** Serves `race` requests: the mode in the params says how the handler reacts to a cancel. */
function serveRace(connection: Connection): void {
  connection.onRequest('race', async (params: RaceParams, responder: Responder) => {
    const listens = params.mode === 'cooperate' || params.mode === 'partial';
    const cancelled = await waitTicks(params.ticks, () => listens && responder.isCancelled);
    switch (params.mode) {
      case 'cooperate':
        if (!cancelled) return { done: params.ticks };
        responder.respondCancelled();
        return undefined;
      case 'partial':
        return cancelled ? { partial: true } : { done: params.ticks };
      case 'drop':
        responder[Symbol.dispose]();
        return undefined;
      case 'throw':
        throw new RpcError(-32001, 'race handler failed');
      default:
        return { done: params.ticks };
    }
  });
}

/** Sends one `race` request and runs its random cancellation plan, recording every attempt. */
async function sendOne(connection: Connection, random: () => number): Promise<Sent> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const controller = new AbortController();
  const forwarded = new AbortController();
  const useSignal = random() < 0.5;
  const sent = connection.sendRequest(
    'race',
    { mode: pick(MODES), ticks: Math.floor(random() * 4) },
    useSignal ? { signal: controller.signal } : {},
  );
  const handle = sent.cancellationHandle();
  const useForwarding = random() < 0.3;
  if (useForwarding) sent.forwardCancellationFrom(forwarded.signal);
  const record: Sent = { id: sent.id as number, attempts: [], outcomes: 0 };
  const settled = sent.then(
    () => void record.outcomes++,
    () => void record.outcomes++,
  );
  const attempt = (via: Via): void => {
    const wasSettled = sent.isSettled;
    if (via === 'cancel') return void record.attempts.push({ returned: sent.cancel(), wasSettled });
    if (via === 'handle') return void record.attempts.push({ returned: handle.cancel(), wasSettled });
    const signal = via === 'abort' ? (useSignal ? controller : undefined) : useForwarding ? forwarded : undefined;
    if (!signal) return;
    record.attempts.push({ returned: undefined, wasSettled });
    signal.abort();
  };
  const planned = random() < 0.7 ? 1 + Math.floor(random() * 3) : 0;
  for (let i = 0; i < planned; i++) {
    await waitTicks(Math.floor(random() * 4), () => false);
    attempt(pick(VIAS));
  }
  await settled;
  if (random() < 0.5) attempt(pick(VIAS));
  return record;
}

/** Sends `count` requests in batches, each running its own plan concurrently. */
async function sendMany(connection: Connection, seed: number, count: number): Promise<Sent[]> {
  const random = seededRandom(seed);
  const records: Sent[] = [];
  for (let start = 0; start < count; start += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - start) }, () =>
      sendOne(connection, seededRandom(Math.floor(random() * 2 ** 32))),
    );
    records.push(...(await Promise.all(batch)));
  }
  return records;
}

/** Counts, per request id, the lines of one kind on a tap. */
function countById(tap: LineReader, predicate: (m: WireMessage) => boolean, key: (m: WireMessage) => unknown): Map<unknown, number> {
  const counts = new Map<unknown, number>();
  for (const message of tap.messages) {
    if (!predicate(message)) continue;
    const id = key(message);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Checks one direction: `records` were sent on `requests` (with their cancels) and answered on `responses`. */
function checkDirection(records: Sent[], requests: LineReader, responses: LineReader): void {
  const requestLines = countById(
    requests,
    (m) => m.method === 'race',
    (m) => m.id,
  );
  const cancelLines = countById(requests, isCancelFor(), (m) => (m.params as { requestId: unknown }).requestId);
  const responseLines = countById(
    responses,
    (m) => isResponse(m),
    (m) => m.id,
  );
  expect(requestLines.size).to.equal(records.length);
  expect([...cancelLines.keys()].filter((id) => !requestLines.has(id))).to.deep.equal([]);
  for (const record of records) {
    expect(requestLines.get(record.id), `request lines for ${record.id}`).to.equal(1);
    expect(responseLines.get(record.id), `responses to ${record.id}`).to.equal(1);
    expect(record.outcomes, `outcomes of ${record.id}`).to.equal(1);
    const askedWhilePending = record.attempts.some((a) => !a.wasSettled);
    expect(cancelLines.get(record.id) ?? 0, `cancel lines for ${record.id}`).to.equal(askedWhilePending ? 1 : 0);
    expect(record.attempts.filter((a) => a.returned === true).length).to.be.at.most(1);
    expect(record.attempts.filter((a) => a.wasSettled && a.returned === true)).to.deep.equal([]);
  }
}

/** The kinds of answers on the taps: `result`, `partial`, or an error code. */
function answerKinds(taps: LineReader[]): unknown[] {
  const kinds = new Set<unknown>();
  for (const tap of taps) {
    for (const m of tap.messages.filter(isResponse)) {
      if ('error' in m) kinds.add((m.error as { code: number }).code);
      else kinds.add((m.result as { partial?: boolean }).partial ? 'partial' : 'result');
    }
  }
  return [...kinds];
}

describe('Cancellation race', () => {
  it(`answers each of ${2 * REQUESTS_PER_SIDE} requests exactly once, with at most one cancel each and none after settlement, under random cancels from both sides`, async function () {
    this.timeout(60_000);
    const pair = tappedPair();
    serveRace(pair.left);
    serveRace(pair.right);
    const [fromClient, fromAgent] = await Promise.all([
      sendMany(pair.left, SEED, REQUESTS_PER_SIDE),
      sendMany(pair.right, SEED + 1, REQUESTS_PER_SIDE),
    ]);
    // Every answer has been routed; let the last queued lines (late cancels) reach the taps.
    await nextTurn();
    await nextTurn();
    await pair.close();
    checkDirection(fromClient, pair.fromLeft, pair.fromRight);
    checkDirection(fromAgent, pair.fromRight, pair.fromLeft);
    // The mix really happened: cancels were sent, late attempts were made, every kind of answer went out.
    const cancels = pair.fromLeft.matching(isCancelFor()).length + pair.fromRight.matching(isCancelFor()).length;
    expect(cancels).to.be.above(REQUESTS_PER_SIDE / 2);
    expect([...fromClient, ...fromAgent].some((r) => r.attempts.some((a) => a.wasSettled))).to.equal(true);
    expect(answerKinds([pair.fromLeft, pair.fromRight])).to.include.members(['result', 'partial', -32800, -32603, -32001]);
  });
});
