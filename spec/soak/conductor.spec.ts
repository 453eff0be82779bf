import { expect } from 'chai';
import { Conductor, configureIdleCollection, createConnectionPair, type Connection, type ConductorOutcome } from '../../lib';
import { UnhandledRejections } from '../helpers/events';
import { LineReader } from '../helpers/lines';
import { CLI, CONFORMANCE_AGENT, ensureBuilt, PASSTHROUGH_PROXY } from '../helpers/processes';
import { drain, installSoakHandler, runSender, type SenderReport, SOAK_METHOD, soakRequest, type SoakRequest } from '../helpers/soak';
import { TraceChecker } from '../helpers/trace-checker';

/** Requests the client sends through the chain; `npm run soak` raises it. */
const TOTAL = Number(process.env.SOAK_CHAIN_REQUESTS ?? 2000);
const SEED = Number(process.env.SOAK_SEED ?? 23);
const HOPS = ['client', 'proxy1', 'proxy2', 'agent'] as const;

/** A random request for the conformance agent; `_test/callClient` makes it call the client back. */
function chainRequest(random: () => number): SoakRequest {
  const ms = Math.floor(random() * 5);
  const pickOne = Math.floor(random() * 8);
  switch (pickOne) {
    case 0:
      return { method: '_test/echo', params: { n: ms } };
    case 1:
      return { method: '_test/sleep', params: { ms, onCancel: (['error', 'ignore', 'partial'] as const)[ms % 3] } };
    case 2:
      return { method: '_test/throw', params: { code: -32001, message: 'soak failure' } };
    case 3:
      return { method: '_test/hold', params: { ms } };
    case 4:
      return { method: '_test/drop', params: { afterMs: ms } };
    default: {
      // The agent's own request to the client, which the agent may cancel or drop.
      const inner = soakRequest(random);
      const cancelAfterMs = random() < 0.5 ? Math.floor(random() * 5) : undefined;
      return { method: '_test/callClient', params: { method: inner.method, params: inner.params, cancelAfterMs, drop: random() < 0.1 } };
    }
  }
}

describe('Race soak through the conductor with two proxies', function () {
  this.timeout(Math.max(120_000, TOTAL * 60));
  const rejections = new UnhandledRejections();
  /** Our own connection's trace, and the conductor's side of each hop. */
  const ours = new TraceChecker();
  const hops = Object.fromEntries(HOPS.map((name) => [name, new TraceChecker({ handlesSoak: false })])) as Record<
    (typeof HOPS)[number],
    TraceChecker
  >;
  let client: Connection;
  let conductor: Conductor;
  let stderr: LineReader[] = [];
  let sender: SenderReport;
  let counts: Record<string, number[]>;
  let outcome: ConductorOutcome;

  before(async () => {
    ensureBuilt();
    rejections.install();
    configureIdleCollection({ initialDelayMs: 20, maxDelayMs: 200 });
    const [ourEnd, conductorEnd] = createConnectionPair({ logger: ours, name: 'test' }, { logger: hops.client, name: 'client' });
    client = ourEnd;
    installSoakHandler(client);
    const component = (file: string): { command: string; args: string[] } => ({ command: process.execPath, args: [file] });
    conductor = new Conductor({
      client: conductorEnd,
      components: [component(PASSTHROUGH_PROXY), component(PASSTHROUGH_PROXY), component(CONFORMANCE_AGENT)],
      logger: (name) => hops[name as (typeof HOPS)[number]],
      stderr: 'pipe',
    });
    stderr = conductor.components.map((c) => new LineReader(c.child!.stderr!));
    await client.sendRequest('initialize', { protocolVersion: 2, capabilities: {} });
    sender = await runSender(client, { seed: SEED, count: TOTAL, request: chainRequest });
    const all = [ours, ...Object.values(hops)];
    const connections = [client, conductorEnd, ...conductor.components.map((c) => c.connection)];
    await drain(
      () => all.every((t) => t.outstanding() === 0) && connections.every((c) => c.pendingCount === 0),
      () =>
        `${JSON.stringify(Object.fromEntries(HOPS.map((h) => [h, hops[h].report()])))} stderr: ${stderr.flatMap((s) => s.lines).join(' | ')}`,
      { progress: () => all.reduce((sum, t) => sum + t.lineCount, 0), collect: () => void client.sendRequest('_test/gc').then(noop, noop) },
    );
    counts = Object.fromEntries(connections.map((c, i) => [['test', ...HOPS][i]!, [c.pendingCount, c.inflightCount]]));
    outcome = await conductor.close();
  });

  after(() => {
    rejections.uninstall();
    configureIdleCollection({ initialDelayMs: 1000, maxDelayMs: 8000 });
  });

  it(`sends ${TOTAL} requests through the chain, and the agent calls back through it`, () => {
    expect(sender.sent).to.equal(TOTAL);
    expect(ours.report().requestsIn).to.be.greaterThan(TOTAL / 10);
    expect(hops.agent.report().requestsIn).to.be.greaterThan(TOTAL / 10);
  });

  it('answers every request exactly once on every hop', () => {
    for (const checker of [ours, ...Object.values(hops)]) {
      const report = checker.report();
      expect([report.unansweredIn, report.unansweredOut]).to.deep.equal([0, 0]);
      expect(report.violations).to.deep.equal([]);
    }
  });

  it('sends at most one cancel per request on every hop and none after settlement, in both directions', () => {
    // Each checker flags a second cancel sent or received, and (for what its side sent) a cancel after the answer.
    expect(ours.report().cancelsOut, 'client cancels').to.be.greaterThan(TOTAL / 10);
    expect(hops.agent.report().cancelsOut, 'cancels re-issued to the agent').to.be.greaterThan(0);
    expect(hops.agent.report().cancelsIn, 'cancels from the agent').to.be.greaterThan(0);
    expect(ours.report().cancelsIn, 'agent cancels reaching the client').to.be.greaterThan(0);
    expect(sender.violations).to.deep.equal([]);
  });

  it(`answers the agent's ${SOAK_METHOD} calls as the handler behaviour and the cancellation imply`, () => {
    expect(ours.report().violationCount).to.equal(0);
    expect(Object.keys(ours.report().answers)).to.include.members(['result', '-32800', '-32603']);
  });

  it('leaves nothing pending or in flight on any hop', () => {
    expect(counts).to.deep.equal(Object.fromEntries(Object.keys(counts).map((k) => [k, [0, 0]])));
  });

  it('closes the chain cleanly afterwards', () => {
    expect(outcome.reason).to.equal('closed locally');
  });

  it('leaves no rejection unhandled', () => {
    expect(rejections.reasons).to.deep.equal([]);
  });
});

function noop(): void {}
