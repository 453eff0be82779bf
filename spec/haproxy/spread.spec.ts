/**
 * `acp-wire serve` behind HAProxy (Debian's, run by the test with docs/deploy.md's haproxy.cfg):
 * many clients are spread over the instances and keep their affinity. Real processes on 127.0.0.1.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { useBuild } from '../helpers/processes';
import { until } from './balancer';
import { CHUNKS_PER_TURN, closeClients, openClients, runTurn } from './clients';
import { useCluster } from './cluster';

const CLIENTS = 200;
const PATH_CLIENTS = 20;

/** One POST of a JSON-RPC message to `url` (a connection of its own): its status and body. */
async function post(url: string, message: unknown): Promise<{ status: number; body: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Connection: 'close' },
    body: JSON.stringify(message),
  });
  return { status: response.status, body: await response.text() };
}

/**
 * A client of acp-http-client's dialect (the connection id in the path, each answer in its POST's
 * body): initializes, asks for an echo, and leaves (DELETE).
 */
async function pathDialectExchange(httpUrl: string, i: number): Promise<unknown> {
  const url = `${httpUrl}/${randomUUID()}`;
  const init = await post(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } });
  if (init.status !== 200) throw new Error(`initialize: ${init.status} ${init.body}`);
  const echo = await post(url, { jsonrpc: '2.0', id: 2, method: '_test/echo', params: { client: i } });
  const deleted = await fetch(url, { method: 'DELETE', headers: { Connection: 'close' } });
  await deleted.text();
  return { echo: echo.status === 200 ? JSON.parse(echo.body) : echo, deleted: deleted.status };
}

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

  it("keeps acp-http-client's dialect (the connection id in the path) on the instance that opened it", async () => {
    const { a, b, balancer } = await startCluster();
    const exchanges = await Promise.all(Array.from({ length: PATH_CLIENTS }, (_, i) => pathDialectExchange(balancer.httpUrl, i)));
    expect(exchanges).to.deep.equal(
      Array.from({ length: PATH_CLIENTS }, (_, i) => ({ echo: { jsonrpc: '2.0', id: 2, result: { client: i } }, deleted: 202 })),
    );
    await until(() => a.agents().length + b.agents().length === 0, 'every agent has ended');
  });
});
