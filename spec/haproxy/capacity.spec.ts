/**
 * An instance behind HAProxy at its client limit (`--max-clients`): it answers new clients 503 and
 * its health says `full`; HAProxy retries those clients on the other instance (`retry-on 503`) and
 * its health check takes the full one out until a slot frees. Real processes on 127.0.0.1.
 */
import { expect } from 'chai';
import { useBuild } from '../helpers/processes';
import { get, until } from './balancer';
import { CHUNKS_PER_TURN, closeClients, openClient, runTurn, type TurnClient, type Transport } from './clients';
import { useCluster } from './cluster';

const CLIENTS = 10;
const FULL_AT = 2;

/** Opens `count` clients one after the other, alternating WebSocket and Streamable HTTP. */
async function openOneByOne(urls: { wsUrl: string; httpUrl: string }, count: number, into: TurnClient[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const transport: Transport = i % 2 === 0 ? 'websocket' : 'http';
    into.push(await openClient(urls, transport));
  }
}

describe('acp-wire serve behind HAProxy: an instance at capacity', function () {
  this.timeout(120_000);
  useBuild();
  const startCluster = useCluster();

  it('retries on the other instance a client the full one refused with 503, before any health check sees it', async () => {
    // No health check runs during this test: only the 503 moves clients on.
    const { a, b, balancer, clients } = await startCluster({
      a: ['--max-clients', String(FULL_AT)],
      b: ['--max-clients', String(CLIENTS)],
      checkInterval: '1h',
    });
    await openOneByOne(balancer, CLIENTS, clients);
    expect(a.agents()).to.have.length(FULL_AT);
    expect(b.agents()).to.have.length(CLIENTS - FULL_AT);
    // HAProxy did send clients to the full instance: it refused them, and HAProxy retried elsewhere.
    expect(a.stderr.text).to.match(new RegExp(`refused a client from 127\\.0\\.0\\.1:\\d+: client limit reached \\(${FULL_AT} open\\)`));
    expect(balancer.stderr.text).not.to.match(/is DOWN/);
    const outcomes = await Promise.all(clients.map((client) => runTurn(client, 200)));
    expect(outcomes).to.deep.equal(Array(CLIENTS).fill({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN }));
  });

  it('takes the full instance out by its health check, and puts it back once a slot frees', async () => {
    const { a, b, balancer, clients } = await startCluster({
      a: ['--max-clients', String(FULL_AT)],
      b: ['--max-clients', String(CLIENTS)],
    });
    await openOneByOne(balancer, CLIENTS, clients);
    await until(() => a.agents().length === FULL_AT, `a is full (${FULL_AT} agents)`);
    expect(await get(a.healthUrl)).to.deep.equal({ status: 503, body: 'full' });
    expect(await balancer.untilServer('a', 'DOWN')).to.match(/Layer7 wrong status, code: 503/);
    expect(b.agents()).to.have.length(CLIENTS - FULL_AT);
    const outcomes = await Promise.all(clients.map((client) => runTurn(client, 200)));
    expect(outcomes).to.deep.equal(Array(CLIENTS).fill({ stopReason: 'end_turn', chunks: CHUNKS_PER_TURN }));

    // Every client leaves: a is ready again, HAProxy puts it back, and new clients reach it.
    await closeClients(clients.splice(0));
    await until(() => a.agents().length + b.agents().length === 0, 'every agent has ended');
    expect(await get(a.healthUrl)).to.deep.equal({ status: 200, body: 'ready' });
    expect(await balancer.untilServer('a', 'UP')).to.match(/Layer7 check passed, code: 200/);
    await openOneByOne(balancer, 4, clients);
    expect(a.agents().length, 'agents on a').to.be.greaterThan(0);
  });
});
