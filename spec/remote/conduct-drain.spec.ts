/**
 * `acp-wire conduct --listen` behind a load balancer: its health path, and its drain on SIGTERM
 * (real processes: a conductor child running the conformance agent as each chain's agent).
 */
import { expect } from 'chai';
import WebSocket from 'ws';
import { HttpStatusError, RpcError, connectHttp, connectWebSocket, type Connection } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { childProcesses } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, spawnScript, stopAll, useBuild, type SpawnedProcess } from '../helpers/processes';

const AGENT = `${process.execPath} ${CONFORMANCE_AGENT}`;
/** Version 1: a `session/prompt` is answered at the end of its turn, which the drain waits for. */
const INIT_V1 = { protocolVersion: 1, clientInfo: { name: 'spec-client', version: '1.0.0' } };

interface Conductor extends SpawnedProcess {
  readonly url: string;
  readonly healthUrl: string;
}

/** Starts `acp-wire conduct --listen 0 <args> AGENT` and waits for its `listening` line. */
async function startConductor(args: string[]): Promise<Conductor> {
  const spawned = spawnScript(CLI, ['conduct', '--listen', '0', ...args, AGENT]);
  const first = await spawned.stdout.take();
  const match = /^listening (ws:\/\/127\.0\.0\.1:(\d+)\/acp)$/.exec(first);
  if (!match) throw new Error(`unexpected first line ${JSON.stringify(first)}; stderr: ${spawned.stderr.text}`);
  return { ...spawned, url: match[1]!, healthUrl: `http://127.0.0.1:${match[2]}/healthz` };
}

async function health(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { headers: { Connection: 'close' } });
  return { status: response.status, body: await response.text() };
}

/** Initializes (v1), opens a session and starts a turn that works `workMs`; resolves once it streams, with its answer to come. */
async function startTurn(client: Connection, workMs: number): Promise<{ answer: Promise<unknown> }> {
  await client.sendRequest('initialize', INIT_V1);
  const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
  const streaming = new Promise<void>((resolve) => client.onNotification('session/update', () => resolve()));
  const answer = Promise.resolve(
    client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'work' }], _meta: { workMs } }),
  );
  await streaming;
  return { answer };
}

/** The close code of a raw WebSocket client, once closed. */
function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.once('close', (code) => resolve(code)));
}

describe('acp-wire conduct --listen behind a load balancer (real processes)', () => {
  useBuild();
  const connections: Connection[] = [];
  const sockets: WebSocket[] = [];

  afterEach(async () => {
    await Promise.all(connections.splice(0).map((connection) => connection.close()));
    for (const ws of sockets.splice(0)) ws.terminate();
    await stopAll();
  });

  it('answers GET /healthz 200 "ready", and 503 "full" while --max-chains clients are served', async () => {
    const conductor = await startConductor(['--max-chains', '1']);
    expect(await health(conductor.healthUrl)).to.deep.equal({ status: 200, body: 'ready' });
    const client = await connectWebSocket(conductor.url);
    connections.push(client);
    await client.sendRequest('initialize', INIT_V1);
    expect(await health(conductor.healthUrl)).to.deep.equal({ status: 503, body: 'full' });
    conductor.child.kill('SIGTERM');
    expect(await conductor.exited).to.deep.equal({ code: 0, signal: null });
  });

  it('drains on SIGTERM: refuses new clients, closes an idle one at once, lets turns end, then exits 0', async () => {
    const conductor = await startConductor([]);
    const idle = new WebSocket(conductor.url);
    sockets.push(idle);
    const idleClosed = closeCode(idle);
    await new Promise((resolve) => idle.once('open', resolve));
    const overWebSocket = await connectWebSocket(conductor.url);
    const overHttp = connectHttp(conductor.url.replace('ws://', 'http://'));
    connections.push(overWebSocket, overHttp);
    const turns = await Promise.all([startTurn(overWebSocket, 1500), startTurn(overHttp, 1500)]);

    conductor.child.kill('SIGTERM');
    // Its chain shuts down and its connection is closed going away (1001), as serve closes its clients.
    expect(await idleClosed).to.equal(1001);
    expect(await health(conductor.healthUrl)).to.deep.equal({ status: 503, body: 'draining' });
    const refused = await rejectionOf(connectWebSocket(conductor.url));
    expect(refused).to.be.instanceOf(HttpStatusError).and.include({ status: 503 });
    // Each turn ends before its client is closed.
    expect(await Promise.all(turns.map((turn) => turn.answer))).to.deep.equal([{ stopReason: 'end_turn' }, { stopReason: 'end_turn' }]);
    expect(await conductor.exited).to.deep.equal({ code: 0, signal: null });
    expect(conductor.stderr.text).not.to.match(/cut/);
    expect(childProcesses(conductor.child.pid!)).to.deep.equal([]);
  });

  it('cuts a client still in a request at --drain-timeout, says so and exits 3', async () => {
    const conductor = await startConductor(['--drain-timeout', '100']);
    const client = await connectWebSocket(conductor.url);
    connections.push(client);
    await client.sendRequest('initialize', INIT_V1);
    const sleeping = client.sendRequest('_test/sleep', { ms: 60_000 });
    expect(await client.sendRequest('_test/echo', ['barrier'])).to.deep.equal(['barrier']);
    conductor.child.kill('SIGTERM');
    // The conductor shuts the cut client's chain down as on SIGINT: its request in flight is answered.
    const cut = await rejectionOf<RpcError>(sleeping);
    expect(cut).to.be.instanceOf(RpcError);
    expect(cut.toJSON()).to.deep.equal({
      code: -32603,
      message: 'Internal error',
      data: { reason: 'incoming_transport_closed', method: '_test/sleep' },
    });
    expect(await conductor.exited).to.deep.equal({ code: 3, signal: null });
    expect(conductor.stderr.text).to.match(/acp-wire conduct: drained 1 client: cut 1 still in a request at the drain deadline \(100 ms\)/);
  });

  it('refuses --drain-timeout without --listen (usage error, exit 2)', async () => {
    const spawned = spawnScript(CLI, ['conduct', '--tcp', '0', '--drain-timeout', '100', AGENT]);
    expect(await spawned.exited).to.deep.equal({ code: 2, signal: null });
    expect(spawned.stderr.text).to.match(/--drain-timeout needs --listen/);
  });

  it('drains, rather than dies, on a SIGTERM sent as soon as the listening line is read', async () => {
    // The signal handlers are in place before the line: the default action (death by SIGTERM) never applies.
    for (let attempt = 0; attempt < 5; attempt++) {
      const spawned = spawnScript(CLI, ['conduct', '--listen', '0', AGENT]);
      await spawned.stdout.take();
      spawned.child.kill('SIGTERM');
      expect(await spawned.exited).to.deep.equal({ code: 0, signal: null });
    }
  });
});
