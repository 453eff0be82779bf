import { expect } from 'chai';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { ConnectionClosedError, RpcError, type ChildConnection, type CloseReason } from '../../lib';
import { type Outcome, track } from '../helpers/async';
import { activeResources, listenerCounts, STREAM_EVENTS, UnhandledRejections } from '../helpers/events';
import { spawnFaultPeer } from '../helpers/faults';
import { childClosed, useBuild } from '../helpers/processes';
import { seededRandom } from '../helpers/random';

/** How many seeded runs; `npm run soak` raises it. */
const RUNS = Number(process.env.KILL_RUNS ?? 6);
/** Runs at a time. */
const BATCH = 3;
const FIRST_SEED = Number(process.env.KILL_SEED ?? 1);
// Which one depends on what the connection notices first: its input's end, the exit, or EPIPE on its output.
const CLOSED_REASONS: readonly CloseReason[] = ['input ended', 'peer exited', 'input error', 'output error'];

type Method = 'echo' | 'sleep' | 'wait' | 'callBack' | 'drop';
const METHODS: readonly Method[] = ['echo', 'sleep', 'wait', 'callBack', 'drop'];

interface Sent {
  method: Method;
  params: unknown;
  outcome: () => Outcome;
  done: Promise<void>;
}

/** What one seeded run observed. */
interface Run {
  seed: number;
  style: 'external' | 'midLine';
  sent: Sent[];
  pendingAtClose: number;
  unsettledAfterClose: number;
  heldAborts: unknown[];
  heldCount: number;
  counts: { pending: number; inflight: number };
  listeners: { stdout: Record<string, number>; stdin: Record<string, number> };
}

function paramsFor(method: Method, random: () => number, i: number): unknown {
  switch (method) {
    case 'echo':
      return { i };
    case 'sleep':
      return { ms: Math.floor(random() * 20) };
    case 'callBack':
      return { method: 'held', params: { i } };
    default:
      return undefined;
  }
}

/** Sends seeded random requests to the fault peer and kills it at a seeded point. */
async function killRun(seed: number): Promise<Run> {
  const random = seededRandom(seed);
  const { peer, held, closed } = startPeer();
  const sent = sendRandom(peer, random);
  const style = random() < 0.3 ? 'midLine' : 'external';
  const answerable = sent.filter((s) => s.method === 'echo' || s.method === 'sleep').length;
  await killAt(peer, sent, style, Math.floor(random() * (answerable + 1)));
  const pendingAtClose = await closed;
  await nextMacrotask();
  const unsettledAfterClose = sent.filter((s) => s.outcome().status === 'pending').length;
  await childClosed(peer.child);
  return {
    seed,
    style,
    sent,
    pendingAtClose,
    unsettledAfterClose,
    heldAborts: held.map((signal) => signal.reason),
    heldCount: sent.filter((s) => s.method === 'callBack').length,
    counts: { pending: peer.connection.pendingCount, inflight: peer.connection.inflightCount },
    listeners: { stdout: listenerCounts(peer.child.stdout!, STREAM_EVENTS), stdin: listenerCounts(peer.child.stdin!, STREAM_EVENTS) },
  };
}

/**
 * Spawns the fault peer; `held` collects the signals of its `held` requests to us (never answered),
 * `closed` resolves with the pending count at the moment the connection emits `close`.
 */
function startPeer(): { peer: ChildConnection; held: AbortSignal[]; closed: Promise<number> } {
  const peer = spawnFaultPeer('agent');
  peer.child.stderr!.resume();
  const held: AbortSignal[] = [];
  peer.connection.onRequest('held', (_params, responder) => {
    held.push(responder.signal);
    responder.signal.addEventListener('abort', () => responder);
  });
  const closed = new Promise<number>((resolve) => peer.connection.once('close', () => resolve(peer.connection.pendingCount)));
  return { peer, held, closed };
}

/** Sends 10 to 39 requests of seeded random methods. */
function sendRandom(peer: ChildConnection, random: () => number): Sent[] {
  const count = 10 + Math.floor(random() * 30);
  const sent: Sent[] = [];
  for (let i = 0; i < count; i++) {
    const method = METHODS[Math.floor(random() * METHODS.length)]!;
    const params = paramsFor(method, random, i);
    const tracked = track(peer.connection.sendRequest(method, params));
    sent.push({ method, params, outcome: () => tracked.outcome, done: tracked.done });
  }
  return sent;
}

/** Kills the peer once `answered` requests have settled: SIGKILL from outside, or the peer kills itself mid-line. */
async function killAt(peer: ChildConnection, sent: Sent[], style: Run['style'], answered: number): Promise<void> {
  await nthSettled(
    sent.map((s) => s.done),
    answered,
  );
  if (style === 'external') {
    peer.child.kill('SIGKILL');
  } else {
    const last = track(peer.connection.sendRequest('killMidLine'));
    sent.push({ method: 'wait', params: 'killMidLine', outcome: () => last.outcome, done: last.done });
  }
}

/** Resolves once `n` of `promises` have settled (at once for 0). */
function nthSettled(promises: Promise<void>[], n: number): Promise<void> {
  if (n === 0) return Promise.resolve();
  let count = 0;
  return new Promise((resolve) => {
    for (const promise of promises) void promise.then(() => ++count === n && resolve());
  });
}

describe('Connection to a peer process killed mid-request', function () {
  this.timeout(60_000);
  useBuild();
  const rejections = new UnhandledRejections();
  const runs: Run[] = [];
  const resources: { before: Record<string, number>; after: Record<string, number> }[] = [];
  let baseline: { stdout: Record<string, number>; stdin: Record<string, number> };

  before(async () => {
    rejections.install();
    baseline = await bareListenerBaseline();
    for (let seed = FIRST_SEED; seed < FIRST_SEED + RUNS; seed += BATCH) {
      const before = activeResources();
      const seeds = Array.from({ length: Math.min(BATCH, FIRST_SEED + RUNS - seed) }, (_, i) => seed + i);
      runs.push(...(await Promise.all(seeds.map(killRun))));
      // A child's process handle closes in the loop iteration after its 'close' event.
      await nextMacrotask();
      await nextMacrotask();
      resources.push({ before, after: activeResources() });
    }
  });

  after(() => rejections.uninstall());

  it('covers both kill styles over the seeded runs', () => {
    expect(new Set(runs.map((r) => r.style))).to.have.property('size', 2);
  });

  it('rejects every request still pending with ConnectionClosedError naming its method', () => {
    for (const run of runs) {
      for (const s of run.sent) {
        const outcome = s.outcome();
        if (outcome.status !== 'rejected' || outcome.reason instanceof RpcError) continue;
        expect(outcome.reason, `seed ${run.seed}`).to.be.instanceOf(ConnectionClosedError);
        const error = outcome.reason as ConnectionClosedError;
        expect(CLOSED_REASONS, `seed ${run.seed}`).to.include(error.reason);
        expect(error.method, `seed ${run.seed}`).to.equal(s.params === 'killMidLine' ? 'killMidLine' : s.method);
      }
      const never = run.sent.filter((s) => s.method === 'wait' || s.method === 'callBack');
      expect(
        never.every((s) => s.outcome().status === 'rejected'),
        `seed ${run.seed}`,
      ).to.equal(true);
    }
  });

  it('resolves the requests answered before the kill with their results', () => {
    for (const run of runs) {
      for (const s of run.sent.filter((x) => x.outcome().status === 'resolved')) {
        const { value } = s.outcome() as { value: unknown };
        const expected = s.method === 'echo' ? s.params : { slept: (s.params as { ms: number }).ms };
        expect(value, `seed ${run.seed}`).to.deep.equal(expected);
      }
    }
  });

  it('fails every pending request by the time the connection emits close', () => {
    expect(runs.map((r) => [r.pendingAtClose, r.unsettledAfterClose])).to.deep.equal(runs.map(() => [0, 0]));
  });

  it('aborts the signal of every request the peer had sent us, with ConnectionClosedError', () => {
    for (const run of runs) {
      expect(run.heldAborts.length, `seed ${run.seed}`).to.be.at.most(run.heldCount);
      for (const reason of run.heldAborts) expect(reason, `seed ${run.seed}`).to.be.instanceOf(ConnectionClosedError);
    }
  });

  it('leaves nothing pending or in flight', () => {
    expect(runs.map((r) => r.counts)).to.deep.equal(runs.map(() => ({ pending: 0, inflight: 0 })));
  });

  it("removes its listeners from the child's streams, keeping one error guard on each", () => {
    const expected = {
      stdout: { ...baseline.stdout, error: baseline.stdout.error! + 1 },
      stdin: { ...baseline.stdin, error: baseline.stdin.error! + 1 },
    };
    expect(runs.map((r) => r.listeners)).to.deep.equal(runs.map(() => expected));
  });

  it('leaves no handle, timer or child process behind', () => {
    for (const batch of resources) expect(batch.after).to.deep.equal(batch.before);
  });

  it('leaves no rejection unhandled', () => {
    expect(rejections.reasons).to.deep.equal([]);
  });
});

/** Listener counts on a child's stdout and stdin that Node itself leaves after the child closes. */
async function bareListenerBaseline(): Promise<{ stdout: Record<string, number>; stdin: Record<string, number> }> {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['-e', ''], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout.resume();
  child.stderr.resume();
  child.stdin.end();
  await childClosed(child);
  await nextMacrotask();
  await nextMacrotask();
  return { stdout: listenerCounts(child.stdout, STREAM_EVENTS), stdin: listenerCounts(child.stdin, STREAM_EVENTS) };
}
