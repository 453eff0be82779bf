import { expect } from 'chai';
import { configureIdleCollection, type ChildConnection, type ChildExit } from '../../lib';
import { UnhandledRejections } from '../helpers/events';
import { spawnFaultPeer } from '../helpers/faults';
import { LineReader } from '../helpers/lines';
import { drain, installSoakHandler, type PeerFinish, runSender, type SenderReport } from '../helpers/soak';
import { TraceChecker } from '../helpers/trace-checker';
import { useBuild } from '../helpers/processes';

/** Requests over both directions; `npm run soak` raises it. */
const TOTAL = Number(process.env.SOAK_CHILD_REQUESTS ?? 2000);
const SEED = Number(process.env.SOAK_SEED ?? 11);

describe('Race soak, over a child process', function () {
  this.timeout(Math.max(60_000, TOTAL * 30));
  useBuild();
  const trace = new TraceChecker();
  const rejections = new UnhandledRejections();
  let peer: ChildConnection;
  let stderr: LineReader;
  let ours: SenderReport;
  let theirs: SenderReport;
  let finish: PeerFinish;
  let exit: ChildExit;

  before(async () => {
    rejections.install();
    // Our dropped responders must be noticed while the peer waits for their answers.
    configureIdleCollection({ initialDelayMs: 20, maxDelayMs: 200 });
    peer = spawnFaultPeer('soak', [], { logger: trace, name: 'test' });
    stderr = new LineReader(peer.child.stderr!);
    installSoakHandler(peer.connection);
    [ours, theirs] = await Promise.all([
      runSender(peer.connection, { seed: SEED, count: TOTAL / 2 }),
      peer.connection.sendRequest<SenderReport>('soak/start', { seed: SEED + 1, count: TOTAL / 2 }),
    ]);
    // Both sides collect while the peer drains: each side's dropped responders answer the other.
    let finished: PeerFinish | undefined;
    const finishing = peer.connection.sendRequest<PeerFinish>('soak/finish').then((value) => (finished = value));
    await drain(
      () => finished !== undefined && trace.outstanding() === 0 && peer.connection.pendingCount === 0,
      () => `${JSON.stringify(trace.report())}, peer stderr: ${stderr.lines.join(' | ')}`,
      { progress: () => trace.lineCount },
    );
    finish = await finishing;
    exit = await peer.close();
  });

  after(() => {
    rejections.uninstall();
    configureIdleCollection({ initialDelayMs: 1000, maxDelayMs: 8000 });
  });

  it(`sends ${TOTAL} requests across the process boundary, half each way`, () => {
    expect([ours.sent, theirs.sent]).to.deep.equal([TOTAL / 2, TOTAL / 2]);
    expect([trace.report().requestsOut, trace.report().requestsIn]).to.deep.equal([TOTAL / 2 + 2, TOTAL / 2]);
  });

  it('answers every request exactly once, with the answer its behaviour implies, on both sides', () => {
    expect(trace.report().violations, 'test side').to.deep.equal([]);
    expect(finish.checker.violations, 'peer side').to.deep.equal([]);
    expect([trace.report().unansweredOut, trace.report().unansweredIn]).to.deep.equal([0, 0]);
    expect([finish.checker.unansweredOut, finish.checker.unansweredIn]).to.deep.equal([0, 1]);
  });

  it('sends cancels from both sides, at most one per request and none after settlement', () => {
    expect(trace.report().cancelsOut).to.be.greaterThan(TOTAL / 10);
    expect(finish.checker.cancelsOut).to.be.greaterThan(TOTAL / 10);
    expect(ours.violations.concat(theirs.violations)).to.deep.equal([]);
  });

  it('leaves nothing pending or in flight on either side', () => {
    expect([peer.connection.pendingCount, peer.connection.inflightCount]).to.deep.equal([0, 0]);
    expect([finish.pendingCount, finish.inflightCount]).to.deep.equal([0, 0]);
  });

  it('lets the peer exit 0 once its stdin ends, with nothing on stderr', () => {
    expect(exit).to.deep.equal({ code: 0, signal: null });
    expect(stderr.lines).to.deep.equal([]);
  });

  it('leaves no rejection unhandled', () => {
    expect(rejections.reasons).to.deep.equal([]);
  });
});
