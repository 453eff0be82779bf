/**
 * The resumable Streamable HTTP wire seen from outside a reconnecting client: what it tells the
 * server with `Acp-Events-Received`, and what the server then no longer holds.
 */
import { expect } from 'chai';
import { request } from 'node:http';
import { connectHttp, listenRemote, type Connection, type RemoteListener } from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { expectTcpHandles, tcpHandles } from './remote-helpers';

/** The status of an event stream GET resuming after `lastEventId` (its body is not read: the socket is closed). */
function resumeStatus(url: string, connectionId: string, lastEventId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const get = request(url, {
      headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId, 'Last-Event-ID': lastEventId },
    });
    get.once('response', (response) => {
      resolve(response.statusCode ?? 0);
      response.destroy();
    });
    get.once('error', reject);
    get.end();
  });
}

/**
 * A resumable listener serving the conformance agent, started before each test of the enclosing
 * `describe`; after each, the client the test tracked and the listener are closed, and no TCP
 * handle may be left.
 */
function useResumableHttp() {
  let baseline: number;
  let listener: RemoteListener;
  let client: Connection | undefined;
  let connectionId = '';
  beforeEach(async () => {
    baseline = tcpHandles();
    listener = await listenRemote({ heartbeat: false, resume: { bufferMessages: 1000, graceMs: 5000 } }, (connection, info) => {
      connectionId = info.connectionId;
      serveConformanceAgent(connection);
    });
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await listener.close();
    await expectTcpHandles(baseline);
  });
  return {
    url: (): string => listener.httpUrl,
    /** The id of the last connection the listener opened. */
    connectionId: (): string => connectionId,
    /** Closes `connection` after the test. */
    track: (connection: Connection): Connection => (client = connection),
  };
}

describe('Resumable Streamable HTTP wire (a reconnecting client)', () => {
  const bench = useResumableHttp();

  it('tells the server the last event received every 16 events, and the server lets go of the events up to it', async () => {
    const client = bench.track(connectHttp(bench.url(), { reconnect: {} }));
    await client.sendRequest('initialize', { protocolVersion: 2 });
    // Answers on the connection's stream: each POST after the 16th event (or 16 more since the
    // last told) says the last one received, so the last POST told at least the 115th.
    for (let i = 0; i < 131; i++) await client.sendRequest('_test/echo', { i });
    // A resume before what the client said it has is refused. Without the acknowledgements
    // those events would be held (the buffer keeps 1,000) and the resume answered.
    expect(await resumeStatus(bench.url(), bench.connectionId(), '5')).to.equal(409);
    expect(await resumeStatus(bench.url(), bench.connectionId(), '100')).to.equal(409);
  });
});

/** Sends `method` with `headers` (and `body`); resolves with the status, the response headers and the body. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    sent.once('error', reject);
    sent.end(body);
  });
}

describe('Streamable HTTP heartbeats (Acp-Heartbeat)', () => {
  const bench = useResumableHttp();

  async function openRaw(): Promise<string> {
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } });
    const opened = await send(bench.url(), 'POST', { 'Content-Type': 'application/json', Accept: 'application/json' }, initialize);
    expect(opened.status).to.equal(200);
    return opened.headers['acp-connection-id'] as string;
  }

  it('answers a heartbeat 204 for a connection it holds and 404 for one it does not', async () => {
    const connectionId = await openRaw();
    expect((await send(bench.url(), 'POST', { 'Acp-Connection-Id': connectionId, 'Acp-Heartbeat': '100' })).status).to.equal(204);
    expect((await send(bench.url(), 'POST', { 'Acp-Connection-Id': 'nope', 'Acp-Heartbeat': '100' })).status).to.equal(404);
    expect((await send(bench.url(), 'DELETE', { 'Acp-Connection-Id': connectionId })).status).to.equal(202);
  });

  it('drops the event stream of a client that named a heartbeat and then fell silent (its grace period then runs)', async () => {
    const connectionId = await openRaw();
    const dropped = new Promise<string>((resolve) => {
      const get = request(bench.url(), {
        headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId, 'Acp-Heartbeat': '50' },
      });
      get.once('response', (response) => {
        response.resume();
        response.once('close', () => resolve(String(response.statusCode)));
      });
      get.once('error', () => resolve('cut'));
      get.end();
    });
    // Without the heartbeat check nothing ever ends this stream (the test times out).
    expect(await dropped).to.be.oneOf(['200', 'cut']);
    // The connection itself is still held (for a resume within the grace period).
    expect((await send(bench.url(), 'POST', { 'Acp-Connection-Id': connectionId, 'Acp-Heartbeat': '50' })).status).to.equal(204);
    expect((await send(bench.url(), 'DELETE', { 'Acp-Connection-Id': connectionId })).status).to.equal(202);
  });

  it('keeps the streams of a reconnecting client that heartbeats while idle: nothing is dropped or resumed', async () => {
    let reconnects = 0;
    const client = bench.track(connectHttp(bench.url(), { reconnect: { heartbeatMs: 50, onReconnecting: () => void reconnects++ } }));
    await client.sendRequest('initialize', { protocolVersion: 2 });
    // Idle for eight heartbeat intervals (the server drops a stream after three of silence).
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await client.sendRequest('_test/echo', { n: 1 })).to.deep.include({ n: 1 });
    expect(reconnects).to.equal(0);
  });
});
