import { expect } from 'chai';
import { UnhandledRejections } from '../helpers/events';
import { tappedPair, type TappedPair } from '../helpers/peers';
import { drain, installSoakHandler, runSender, type SenderReport } from '../helpers/soak';
import { TraceChecker } from '../helpers/trace-checker';

/** Requests per side; `npm run soak` raises it (SOAK_REQUESTS is the total over both sides). */
const TOTAL = Number(process.env.SOAK_REQUESTS ?? 4000);
const SEED = Number(process.env.SOAK_SEED ?? 7);

describe('Race soak, in memory', function () {
  this.timeout(Math.max(60_000, TOTAL * 30));
  const traceA = new TraceChecker();
  const traceB = new TraceChecker();
  const rejections = new UnhandledRejections();
  let pair: TappedPair;
  // Wire-level views from each side (bytes as written on the streams): a cancel enqueued before
  // the response arrived may be flushed after it, hence no strict order.
  const wireA = new TraceChecker({ strictOrder: false });
  const wireB = new TraceChecker({ strictOrder: false });
  let senders: SenderReport[] = [];

  before(async () => {
    rejections.install();
    pair = tappedPair({ logger: traceA, name: 'a' }, { logger: traceB, name: 'b' });
    pair.fromLeft.onLine((line) => {
      wireA.observe('->', line);
      wireB.observe('<-', line);
    });
    pair.fromRight.onLine((line) => {
      wireB.observe('->', line);
      wireA.observe('<-', line);
    });
    installSoakHandler(pair.left);
    installSoakHandler(pair.right);
    senders = await Promise.all([
      runSender(pair.left, { seed: SEED, count: TOTAL / 2 }),
      runSender(pair.right, { seed: SEED + 1, count: TOTAL / 2 }),
    ]);
    await drain(
      () => traceA.outstanding() === 0 && traceB.outstanding() === 0 && pair.left.pendingCount === 0 && pair.right.pendingCount === 0,
      () => `a ${JSON.stringify(traceA.report())} b ${JSON.stringify(traceB.report())}`,
      { progress: () => traceA.lineCount + traceB.lineCount },
    );
  });

  after(async () => {
    rejections.uninstall();
    await pair.close();
  });

  it(`sends ${TOTAL} requests from both sides, each with a cancellation strategy`, () => {
    expect(senders.map((s) => s.sent)).to.deep.equal([TOTAL / 2, TOTAL / 2]);
    expect(traceA.report().requestsOut + traceB.report().requestsOut).to.equal(TOTAL);
    expect(traceA.report().cancelsOut + traceB.report().cancelsOut).to.be.greaterThan(TOTAL / 10);
  });

  it('answers every request exactly once on the wire', () => {
    for (const wire of [wireA, wireB]) {
      const report = wire.report();
      expect(report.violations, 'wire').to.deep.equal([]);
      expect(report.requestsIn + report.requestsOut).to.equal(TOTAL);
      expect([report.unansweredIn, report.unansweredOut]).to.deep.equal([0, 0]);
    }
  });

  it('sends at most one cancel per request and none after its response was routed', () => {
    expect(traceA.report().violations).to.deep.equal([]);
    expect(traceB.report().violations).to.deep.equal([]);
  });

  it('answers each request as its handler behaviour and the cancellation imply', () => {
    // The trace checkers compare every soak answer with the behaviour's expected answer.
    const answers = { ...traceA.report().answers };
    for (const [kind, n] of Object.entries(traceB.report().answers)) answers[kind] = (answers[kind] ?? 0) + n;
    expect(Object.keys(answers)).to.include.members(['result', '-32800', '-32603', '-32001']);
    expect(traceA.report().violationCount + traceB.report().violationCount).to.equal(0);
  });

  it('never enqueues a cancel through the sending API after settlement, nor twice', () => {
    expect(senders.flatMap((s) => s.violations)).to.deep.equal([]);
  });

  it('leaves nothing pending or in flight on either side', () => {
    expect([pair.left.pendingCount, pair.left.inflightCount, pair.right.pendingCount, pair.right.inflightCount]).to.deep.equal([
      0, 0, 0, 0,
    ]);
  });

  it('leaves no rejection unhandled', () => {
    expect(rejections.reasons).to.deep.equal([]);
  });
});
