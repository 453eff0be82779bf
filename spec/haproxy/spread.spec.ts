/**
 * `acp-wire serve` behind HAProxy (Debian's, run by the test with docs/deploy.md's haproxy.cfg):
 * many clients are spread over the instances and keep their affinity. Real processes on 127.0.0.1.
 */
import { expect } from 'chai';
import { useBuild } from '../helpers/processes';
import { until } from './balancer';
import { CHUNKS_PER_TURN, closeClients, openClients, runTurn } from './clients';
import { useCluster } from './cluster';

const CLIENTS = 200;

describe('acp-wire serve behind HAProxy: spreading clients', function () {
  this.timeout(180_000);
  useBuild();
  const startCluster = useCluster();

  it(`spreads ${CLIENTS} WebSocket and Streamable HTTP clients over two instances, and every turn completes`, async () => {
    const limit = ['--max-clients', String(CLIENTS)];
    const { a, b, balancer, clients } = await startCluster({ a: limit, b: limit });
    clients.push(...(await openClients(balancer, CLIENTS)));
    // One agent per client, each on the instance its connection landed on.
    await until(() => a.agents().length + b.agents().length === CLIENTS, `the instances run ${CLIENTS} agents`);
    const spread = [a.agents().length, b.agents().length];
    expect(spread[0], `agents on a and b: ${spread}`).to.be.greaterThan(0);
    expect(spread[1], `agents on a and b: ${spread}`).to.be.greaterThan(0);
    // Every turn runs at once; the Streamable HTTP ones need every POST to reach their own agent.
    const outcomes = await Promise.all(clients.map((client) => runTurn(client, 1000)));
    expect(outcomes.map((outcome) => outcome.stopReason)).to.deep.equal(Array(CLIENTS).fill('end_turn'));
    expect(outcomes.map((outcome) => outcome.chunks)).to.deep.equal(Array(CLIENTS).fill(CHUNKS_PER_TURN));
    await closeClients(clients);
    await until(() => a.agents().length + b.agents().length === 0, 'every agent has ended');
  });
});
