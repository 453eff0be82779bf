/**
 * An instance behind HAProxy drained with SIGTERM in the middle of its clients' turns (the rolling
 * deploy): the health check takes it out, its clients finish their turns, new clients go to the
 * other instance, and it exits 0. Real processes on 127.0.0.1.
 */
import { expect } from 'chai';
import { useBuild } from '../helpers/processes';
import { until } from './balancer';
import { CHUNKS_PER_TURN, openClient, openClients, runTurn, type TurnClient } from './clients';
import { useCluster } from './cluster';

const CLIENTS = 12;
/** Long enough for the health check to take the drained instance out while its turns run. */
const TURN_MS = 4000;

/** Resolves once `client` has received a chunk of its running turn. */
function untilTurnRuns(client: TurnClient): Promise<void> {
  return until(() => client.chunks > 0, 'the turn streams');
}

describe('acp-wire serve behind HAProxy: draining an instance', function () {
  this.timeout(120_000);
  useBuild();
  const startCluster = useCluster();

  it('lets the drained instance finish every turn, sends new clients to the other one, and exits 0', async () => {
    const { a, b, balancer, clients } = await startCluster();
    clients.push(...(await openClients(balancer, CLIENTS)));
    await until(() => a.agents().length + b.agents().length === CLIENTS, 'every client has its agent');
    const onA = a.agents().length;
    const onB = b.agents().length;
    expect([onA, onB], 'agents on a and b').to.satisfy(([x, y]: number[]) => x! > 0 && y! > 0);
    const turns = clients.map((client) => runTurn(client, TURN_MS));
    await Promise.all(clients.map(untilTurnRuns));

    a.child.kill('SIGTERM');
    // Its health says "draining" (503): HAProxy takes it out for new clients.
    expect(await balancer.untilServer('a', 'DOWN')).to.match(/Layer7 wrong status, code: 503/);
    // Mid-turn, every client's requests still reach its own agent (Streamable HTTP: `option persist`).
    const echoes = await Promise.all(clients.map((client, i) => client.connection.sendRequest('_test/echo', { client: i })));
    expect(echoes).to.deep.equal(clients.map((_, i) => ({ client: i })));
    // New clients land on b while a drains.
    const late = await Promise.all([openClient(balancer, 'websocket'), openClient(balancer, 'http')]);
    clients.push(...late);
    expect(b.agents()).to.have.length(onB + late.length);
    const lateOutcomes = await Promise.all(late.map((client) => runTurn(client, 0)));
    expect(lateOutcomes.map((outcome) => outcome.stopReason)).to.deep.equal(['end_turn', 'end_turn']);

    // No turn is lost: a's clients see theirs end before a closes them.
    const outcomes = await Promise.all(turns);
    expect(outcomes).to.deep.equal(Array(CLIENTS).fill({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN }));
    expect(await a.exited).to.deep.equal({ code: 0, signal: null });
    expect(a.stderr.text).not.to.match(/cut/);
    // Exactly a's clients were closed (WebSocket 1001, Streamable HTTP as by a DELETE); b's go on.
    await until(() => clients.filter((client) => client.connection.isClosed).length === onA, `${onA} clients are closed`);
    const open = clients.filter((client) => !client.connection.isClosed);
    expect(open).to.have.length(onB + late.length);
    expect(await Promise.all(open.map((client) => client.connection.sendRequest('_test/echo', ['still here'])))).to.deep.equal(
      Array(open.length).fill(['still here']),
    );
    // A closed client starts again through the balancer, on b.
    const again = await openClient(balancer, 'http');
    clients.push(again);
    expect(await runTurn(again, 0)).to.deep.equal({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN });
    expect(b.agents()).to.have.length(onB + late.length + 1);
  });
});
