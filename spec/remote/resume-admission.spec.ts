/**
 * A resuming WebSocket takes no new client slot: a server that is full or draining lets its own
 * clients resume, and refuses a socket admitted only to resume that does not resume.
 */
import { expect } from 'chai';
import WebSocket from 'ws';
import { HttpStatusError, ServerGoingAwayError, connectWebSocket } from '../../lib';
import type { ClientRefusedError } from '../../lib/hosting';
import { rejectionOf } from '../helpers/async';
import { closeOf } from './remote-helpers';
import { FAST_HEARTBEAT, connectResuming, recordTurns, useResumeBenches, type ResumeBench } from './resume-helpers';

/** The first text frame a raw socket receives, and its close code. */
function firstFrameAndClose(ws: WebSocket): Promise<{ frame: string; code: number }> {
  return new Promise((resolve) => {
    let frame = '';
    ws.once('message', (data) => (frame = data.toString()));
    ws.once('close', (code) => resolve({ frame, code }));
  });
}

/**
 * A reconnecting WebSocket client of `bench`, initialized, with a `_test/sleep` of `ms` that has
 * reached the agent (an echo sent after it was answered): what a drain then waits for.
 */
async function sleepingClient(bench: ResumeBench, minDelayMs: number, maxDelayMs: number, ms: number) {
  let resumed = 0;
  const client = await connectResuming(bench.url('websocket'), 'websocket', { minDelayMs, maxDelayMs, onResumed: () => void resumed++ });
  await client.sendRequest('initialize', { protocolVersion: 2 });
  const closed = closeOf(client);
  const sleeping = client.sendRequest('_test/sleep', { ms });
  await client.sendRequest('_test/echo', {});
  return { client, closed, sleeping, resumes: () => resumed };
}

describe('Resumable WebSocket connections and the client limit', () => {
  let bench: ResumeBench | undefined;
  const startBench = useResumeBenches();

  it('lets the one client of a full server (maxClients 1) resume after a reset, while a new client is still refused 503', async function () {
    this.timeout(20_000);
    bench = await startBench({ graceMs: 5000 }, 1);
    const refusals: ClientRefusedError[] = [];
    bench.listener.pool.on('refused', (refusal) => refusals.push(refusal));
    let resumes = 0;
    const client = await connectResuming(bench.url('websocket'), 'websocket', {
      minDelayMs: 5,
      maxDelayMs: 20,
      onResumed: () => void resumes++,
    });
    await client.sendRequest('initialize', { protocolVersion: 2 });
    const { sessionId } = (await client.sendRequest('session/new', { cwd: '/', mcpServers: [] })) as { sessionId: string };
    const log = recordTurns(client, sessionId);
    log.startTurn();
    const idle = log.whenStops(1);
    const text = Array.from({ length: 20 }, (_, k) => `w${k}`).join(' ');
    const reset = bench.proxy.nextReset();
    bench.proxy.resetAfter('toClient', 400);
    await client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text }], _meta: { workMs: 600 } });
    await reset;
    await idle;
    expect(resumes, 'resumes').to.be.greaterThan(0);
    expect(log.chunks).to.deep.equal([`echo: ${text}`.match(/\S+\s*/g)]);
    expect(log.stops).to.deep.equal(['end_turn']);
    expect(refusals, 'refused while resuming').to.deep.equal([]);
    // Its slot is still its own: a second client does not get in.
    const error = await rejectionOf<HttpStatusError>(connectWebSocket(bench.url('websocket'), { heartbeat: FAST_HEARTBEAT }));
    expect(error).to.be.instanceOf(HttpStatusError).and.include({ status: 503 });
    expect(bench.agents.length).to.equal(1);
    await client.close();
  });

  it('lets a client of a draining server resume after a reset, get its last answer, then closes it going away', async function () {
    this.timeout(20_000);
    bench = await startBench({ graceMs: 5000 });
    const { closed, sleeping, resumes } = await sleepingClient(bench, 5, 20, 1500);
    const drained = bench.listener.drain({ timeoutMs: 10_000 });
    // The next server→client bytes (a heartbeat ping, within 100 ms) reset the connection mid-drain.
    const reset = bench.proxy.nextReset();
    bench.proxy.resetAfter('toClient', 1);
    await reset;
    expect(await sleeping).to.include({ slept: 1500 });
    expect(resumes(), 'resumes').to.be.greaterThan(0);
    expect((await closed).error)
      .to.be.instanceOf(ServerGoingAwayError)
      .and.include({ closeCode: 1001 });
    expect(await drained).to.deep.equal({ clients: 1, cut: 0 });
    expect(bench.agents.length).to.equal(1);
  });

  it('keeps a drained connection whose client is away until it resumes for its last answer, then closes it going away', async function () {
    this.timeout(20_000);
    bench = await startBench({ graceMs: 5000 });
    const { closed, sleeping, resumes } = await sleepingClient(bench, 20, 50, 300);
    // The client is cut off (its socket reset, the network then silent) before the answer is written.
    const reset = bench.proxy.nextReset();
    bench.proxy.resetAfter('toClient', 1);
    await reset;
    bench.proxy.blackhole();
    const drained = bench.listener.drain({ timeoutMs: 10_000 });
    // The answer is written while the client is away, and the drain closes its connection at once.
    await bench.agents[0]!.closed;
    bench.proxy.heal();
    expect(await drained).to.deep.equal({ clients: 1, cut: 0 });
    expect(await sleeping).to.include({ slept: 300 });
    expect(resumes(), 'resumes').to.equal(1);
    expect((await closed).error)
      .to.be.instanceOf(ServerGoingAwayError)
      .and.include({ closeCode: 1001 });
  });

  it('answers stream/resume_failed to a socket that names a held connection but does not resume it, and opens no connection', async function () {
    this.timeout(10_000);
    bench = await startBench({ graceMs: 5000 }, 1);
    const client = await connectResuming(bench.url('websocket'), 'websocket', { minDelayMs: 5, maxDelayMs: 20 });
    await client.sendRequest('initialize', { protocolVersion: 2 });
    const ws = new WebSocket(bench.listener.url, { headers: { 'Acp-Connection-Id': bench.agents[0]!.connectionId } });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const closed = firstFrameAndClose(ws);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } }));
    const { frame } = await closed;
    expect(JSON.parse(frame)).to.deep.equal({
      jsonrpc: '2.0',
      method: 'stream/resume_failed',
      params: { reason: 'the first frame must be stream/resume' },
    });
    expect(bench.agents.length).to.equal(1);
    expect(bench.listener.clientCount).to.equal(1);
    await client.close();
  });
});
