/**
 * An instance behind HAProxy killed (SIGKILL: no drain, no close frame) in the middle of its
 * clients' turns: they get a typed error and start again through the balancer on the other
 * instance; the other instance's clients are untouched. Real processes on 127.0.0.1.
 */
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { ConnectionClosedError, HeartbeatTimeoutError } from '../../lib';
import { isRunning } from '../helpers/process-table';
import { useBuild } from '../helpers/processes';
import { killLeftovers, until } from './balancer';
import { CHUNKS_PER_TURN, openClient, openClients, runTurn, type TurnClient, type TurnOutcome } from './clients';
import { useCluster } from './cluster';

const CLIENTS = 12;
const TURN_MS = 4000;
/** The WebSocket clients' heartbeat: a server that vanished without a word is found within 1 s. */
const HEARTBEAT = { intervalMs: 500, timeoutMs: 500 };
/**
 * How long a killed instance's clients may take to see their error: the heartbeat's bound, plus
 * room for a loaded machine. A bound on liveness, not a speed claim: the error must come before
 * the turns on the other instance end.
 */
const ERROR_BOUND_MS = HEARTBEAT.intervalMs + HEARTBEAT.timeoutMs + 2000;

describe('acp-wire serve behind HAProxy: an instance killed', function () {
  this.timeout(120_000);
  useBuild();
  const startCluster = useCluster();
  let orphans: number[] = [];

  afterEach(async () => {
    await killLeftovers(orphans);
    orphans = [];
  });

  /** Runs a turn on each client, recording each outcome or error in `settled` as it comes. */
  function startTurns(clients: readonly TurnClient[], settled: (TurnOutcome | Error | undefined)[]): Promise<unknown>[] {
    return clients.map((client, i) =>
      runTurn(client, TURN_MS).then(
        (outcome) => (settled[i] = outcome),
        (error: Error) => (settled[i] = error),
      ),
    );
  }

  /** Resolves once `count` outcomes are errors; fails after {@link ERROR_BOUND_MS}. */
  async function untilErrors(settled: readonly (TurnOutcome | Error | undefined)[], count: number): Promise<void> {
    await Promise.race([
      until(() => settled.filter((outcome) => outcome instanceof Error).length === count, `${count} turns fail`),
      delay(ERROR_BOUND_MS, undefined, { ref: false }).then(() => {
        throw new Error(`the clients saw no error within ${ERROR_BOUND_MS} ms: ${settled}`);
      }),
    ]);
  }

  it("fails the killed instance's turns with a typed error, leaves the other's alone, and the failed clients start again", async () => {
    const { a, b, balancer, clients } = await startCluster();
    clients.push(...(await openClients(balancer, CLIENTS, CLIENTS, HEARTBEAT)));
    await until(() => a.agents().length + b.agents().length === CLIENTS, 'every client has its agent');
    orphans = a.agents();
    const onA = orphans.length;
    const onB = b.agents().length;
    expect([onA, onB], 'agents on a and b').to.satisfy(([x, y]: number[]) => x! > 0 && y! > 0);
    const settled: (TurnOutcome | Error | undefined)[] = Array(CLIENTS).fill(undefined);
    const turns = startTurns(clients, settled);
    await until(() => clients.every((client) => client.chunks > 0), 'every turn streams');

    a.child.kill('SIGKILL');
    await untilErrors(settled, onA);
    await Promise.all(turns);
    const failed = settled.filter((outcome): outcome is Error => outcome instanceof Error);
    expect(failed).to.have.length(onA);
    for (const error of failed)
      expect(error).to.be.instanceOf(ConnectionClosedError).and.have.property('code', 'ACP_WIRE_CONNECTION_CLOSED');
    // The other instance's turns complete as if nothing happened.
    const completed = settled.filter((outcome) => !(outcome instanceof Error));
    expect(completed).to.deep.equal(Array(onB).fill({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN }));
    expect(await balancer.untilServer('a', 'DOWN')).to.match(/Layer4 connection problem/);
    // The killed instance's agents end: their stdin closed with it.
    await until(() => !orphans.some(isRunning), "the killed instance's agents have ended");

    // Each failed client starts again through the balancer, and lands on b.
    const again = await Promise.all(
      clients.filter((_, i) => settled[i] instanceof Error).map((client) => openClient(balancer, client.transport, HEARTBEAT)),
    );
    clients.push(...again);
    const outcomes = await Promise.all(again.map((client) => runTurn(client, 0)));
    expect(outcomes).to.deep.equal(Array(onA).fill({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN }));
    expect(b.agents()).to.have.length(onB + onA);
  });

  it('fails the WebSocket turns on a frozen instance (SIGSTOP: no close, no reset) with a heartbeat timeout, and they start again', async () => {
    const { a, b, balancer, clients } = await startCluster();
    const websocket = await Promise.all(Array.from({ length: 6 }, () => openClient(balancer, 'websocket', HEARTBEAT)));
    clients.push(...websocket);
    await until(() => a.agents().length + b.agents().length === websocket.length, 'every client has its agent');
    orphans = a.agents();
    const onA = orphans.length;
    expect([onA, b.agents().length], 'agents on a and b').to.satisfy(([x, y]: number[]) => x! > 0 && y! > 0);
    const settled: (TurnOutcome | Error | undefined)[] = Array(websocket.length).fill(undefined);
    const turns = startTurns(websocket, settled);
    await until(() => websocket.every((client) => client.chunks > 0), 'every turn streams');

    a.child.kill('SIGSTOP');
    try {
      await untilErrors(settled, onA);
      await Promise.all(turns);
      const failed = settled.filter((outcome): outcome is Error => outcome instanceof Error);
      for (const error of failed) {
        expect(error).to.be.instanceOf(ConnectionClosedError);
        expect(error.cause).to.be.instanceOf(HeartbeatTimeoutError);
      }
      const completed = settled.filter((outcome) => !(outcome instanceof Error));
      expect(completed).to.deep.equal(Array(websocket.length - onA).fill({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN }));
      // Its health check times out: HAProxy takes it out, and the failed clients land on b.
      await balancer.untilServer('a', 'DOWN');
      const again = await Promise.all(failed.map(() => openClient(balancer, 'websocket', HEARTBEAT)));
      clients.push(...again);
      const outcomes = await Promise.all(again.map((client) => runTurn(client, 0)));
      expect(outcomes).to.deep.equal(Array(onA).fill({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN }));
    } finally {
      a.child.kill('SIGKILL');
    }
  });
});
