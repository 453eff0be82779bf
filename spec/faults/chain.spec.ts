import { expect } from 'chai';
import { RpcError, spawnConnection, type ChildConnection, type ChildExit } from '../../lib';
import { type Outcome, track } from '../helpers/async';
import { UnhandledRejections } from '../helpers/events';
import { LineReader } from '../helpers/lines';
import { childProcesses } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, PASSTHROUGH_PROXY, useBuild } from '../helpers/processes';

type Victim = 'proxy1' | 'proxy2' | 'agent';

/** What a client of the conductor CLI saw when one component of its chain was killed. */
interface ChainDeath {
  pending: Outcome[];
  heldSignal: AbortSignal;
  exit: ChildExit;
  stderr: LineReader;
  survivors: number[];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `acp-wire conduct proxy proxy agent`, leaves five requests pending at the agent and one
 * agent request pending at the client, then kills `victim` with SIGKILL.
 */
async function killInChain(victim: Victim): Promise<ChainDeath> {
  // The extra word tells the two proxies apart in the process list; the proxy ignores it.
  const commands = [`node ${PASSTHROUGH_PROXY} first`, `node ${PASSTHROUGH_PROXY} second`, `node ${CONFORMANCE_AGENT}`];
  const conductor: ChildConnection = spawnConnection(process.execPath, [CLI, 'conduct', ...commands], { stderr: 'pipe' });
  const stderr = new LineReader(conductor.child.stderr!);
  const client = conductor.connection;
  let heldSignal!: AbortSignal;
  const held = new Promise<void>((resolve) =>
    client.onRequest('client/hold', (_params, responder) => {
      heldSignal = responder.signal;
      responder.signal.addEventListener('abort', () => responder);
      resolve();
    }),
  );
  await client.sendRequest('initialize', { protocolVersion: 2, capabilities: {} });
  const pending = Array.from({ length: 5 }, () => track(client.sendRequest('_test/sleep', { ms: 600_000 })));
  const callBack = track(client.sendRequest('_test/callClient', { method: 'client/hold' }));
  pending.push(callBack);
  await held;
  // Requests go down the chain in order: once this is answered, the sleeps have reached the agent.
  await client.sendRequest('_test/echo', { after: 'sleeps' });
  const children = childProcesses(conductor.child.pid!);
  const index = { proxy1: 0, proxy2: 1, agent: 2 }[victim];
  const marker = ['first', 'second', 'conformance-agent'][index]!;
  const target = children.find((c) => c.command.includes(marker))!;
  process.kill(target.pid, 'SIGKILL');
  await Promise.all(pending.map((p) => p.done));
  const exit = await conductor.exited;
  return {
    pending: pending.map((p) => p.outcome),
    heldSignal,
    exit,
    stderr,
    survivors: children.filter((c) => c !== target && isAlive(c.pid)).map((c) => c.pid),
  };
}

describe('Conductor chain whose proxy or agent is killed mid-request', function () {
  this.timeout(60_000);
  const rejections = new UnhandledRejections();
  useBuild();
  before(() => rejections.install());
  after(() => rejections.uninstall());

  for (const victim of ['agent', 'proxy1', 'proxy2'] as const) {
    describe(`when ${victim} is killed`, () => {
      let death: ChainDeath;
      before(async () => {
        death = await killInChain(victim);
      });

      it('answers every pending client request with -32603 incoming_transport_closed', () => {
        expect(death.pending.map((p) => p.status)).to.deep.equal(death.pending.map(() => 'rejected'));
        for (const outcome of death.pending) {
          const reason = (outcome as { reason: unknown }).reason;
          expect(reason).to.be.instanceOf(RpcError).and.include({ code: -32603 });
          expect((reason as RpcError).data).to.have.property('reason', 'incoming_transport_closed');
        }
      });

      it("aborts the client's handler of the agent's pending request", () => {
        expect(death.heldSignal.aborted).to.equal(true);
      });

      it(`exits with code 1 and names ${victim} on stderr`, () => {
        expect(death.exit).to.deep.equal({ code: 1, signal: null });
        const line = death.stderr.lines.find((text) => text.startsWith('acp-wire conduct: '));
        expect(line).to.include(victim).and.include('SIGKILL');
      });

      it('reaps the other components before it exits', () => {
        expect(death.survivors).to.deep.equal([]);
      });
    });
  }

  describe('afterwards', () => {
    it('leaves no rejection unhandled', () => {
      expect(rejections.reasons).to.deep.equal([]);
    });
  });
});
