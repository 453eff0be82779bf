/**
 * Abandoned Streamable HTTP connections: one that nothing holds (no event stream open, no POST in
 * progress) for `httpIdleTimeoutMs` is closed and frees its slot; one that is held is not. Each
 * "not closed" claim is checked when another connection, opened later, has just been found idle.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connectHttp, listenRemote, type Connection, type RemoteListener, type RemoteServerOptions } from '../../lib';
import type { PooledClient } from '../../lib/hosting';
import { rejectionOf } from '../helpers/async';
import { closeOf, expectTcpHandles, tcpHandles } from './remote-helpers';

/** The limit of tests that wait for a connection to go idle. */
const IDLE_MS = 150;
/**
 * The limit of tests that claim a held connection stays: between its `initialize` answer and
 * the moment it holds its event stream open, its clock runs, and a busy machine must not end it.
 */
const HOLD_IDLE_MS = 1000;
const SILENT = { traces: false, log: () => {} };
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } };

/** POSTs one message; returns the status and the `Acp-Connection-Id` answered. */
async function post(url: string, message: unknown, connectionId?: string): Promise<{ status: number; connectionId: string | null }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(connectionId ? { 'Acp-Connection-Id': connectionId } : {}) },
    body: JSON.stringify(message),
  });
  await response.arrayBuffer();
  return { status: response.status, connectionId: response.headers.get('acp-connection-id') };
}

/** An `initialize` POST, then nothing more: a client that walked away. Returns its connection id. */
async function initializeAndWalkAway(url: string): Promise<string> {
  const { status, connectionId } = await post(url, INITIALIZE);
  expect(status).to.equal(200);
  return connectionId!;
}

describe('Streamable HTTP idle connections (httpIdleTimeoutMs)', () => {
  let baseline: number;
  const listeners: RemoteListener[] = [];
  /** The server side of each connection, in the order they opened. */
  let connections: Connection[];

  async function listen(options: RemoteServerOptions = {}): Promise<RemoteListener> {
    const listener = await listenRemote({ httpIdleTimeoutMs: IDLE_MS, logger: SILENT, ...options }, (connection) => {
      connections.push(connection);
      connection.onRequest('initialize', () => ({ protocolVersion: 2 }));
      connection.onRequest('echo', (params: unknown) => params ?? null);
    });
    listeners.push(listener);
    return listener;
  }

  /** Resolves with the next client `listener`'s pool closes for being idle. */
  function nextIdle(listener: RemoteListener): Promise<PooledClient> {
    return new Promise((resolve) => listener.pool.once('idle', resolve));
  }

  beforeEach(() => {
    baseline = tcpHandles();
    connections = [];
  });

  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((listener) => listener.close()));
    await expectTcpHandles(baseline);
  });

  it("closes a connection that initialized and walked away: 'idle', its connection closes, its slot is free, its id is 404", async () => {
    const listener = await listen({ maxClients: 1 });
    const idle = nextIdle(listener);
    const connectionId = await initializeAndWalkAway(listener.httpUrl);
    expect(listener.clientCount).to.equal(1);
    await idle;
    expect(await closeOf(connections[0]!)).to.have.property('reason', 'closed locally');
    expect(listener.clientCount).to.equal(0);
    expect((await post(listener.httpUrl, { jsonrpc: '2.0', method: 'ping' }, connectionId)).status).to.equal(404);
    // The slot is free: a new client is admitted at maxClients 1.
    expect((await post(listener.httpUrl, INITIALIZE)).status).to.equal(200);
  });

  it('keeps a connection whose event stream is open (acp-wire connectHttp) while another goes idle', async () => {
    const listener = await listen({ httpIdleTimeoutMs: HOLD_IDLE_MS });
    const held = connectHttp(listener.httpUrl);
    await held.sendRequest('initialize', { protocolVersion: 2 });
    // Answered on the connection's event stream: the stream is open from here on.
    expect(await held.sendRequest('echo', ['before'])).to.deep.equal(['before']);
    const idle = nextIdle(listener);
    await initializeAndWalkAway(listener.httpUrl);
    expect((await idle).connection).to.equal(connections[1]);
    expect(connections[0]!.isClosed).to.equal(false);
    expect(await held.sendRequest('echo', ['after'])).to.deep.equal(['after']);
    await held.close();
  });

  it('keeps a connection while a POST to it is in progress, and starts its clock again when the POST ends', async () => {
    const listener = await listen({ httpIdleTimeoutMs: HOLD_IDLE_MS });
    const connectionId = await initializeAndWalkAway(listener.httpUrl);
    // Its event stream holds it until its slow POST has reached the server.
    const events = new AbortController();
    const streamServed = once(listener.server, 'request').then(([, response]) => response as ServerResponse);
    const stream = await fetch(listener.httpUrl, {
      headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId },
      signal: events.signal,
    });
    expect(stream.status).to.equal(200);
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'late/notification' });
    const posted = once(listener.server, 'request');
    const slow = startPost(listener.httpUrl, connectionId, Buffer.byteLength(body));
    slow.request.write(body.slice(0, 10));
    await posted;
    const streamResponse = await streamServed;
    events.abort();
    // The server has seen its event stream go: from here on only the POST holds it.
    if (!streamResponse.closed) await once(streamResponse, 'close');
    const idle = nextIdle(listener);
    await initializeAndWalkAway(listener.httpUrl);
    expect((await idle).connection).to.equal(connections[1]);
    expect(connections[0]!.isClosed).to.equal(false);
    slow.request.end(body.slice(10));
    expect((await slow.response).statusCode).to.equal(202);
    // Nothing holds it any more: it goes idle in its turn.
    await nextIdle(listener);
    expect(await closeOf(connections[0]!)).to.have.property('reason', 'closed locally');
    expect(listener.clientCount).to.equal(0);
  });

  it('never closes an idle connection with httpIdleTimeoutMs 0', async () => {
    const never = await listen({ httpIdleTimeoutMs: 0 });
    const watched = await listen();
    await initializeAndWalkAway(never.httpUrl);
    const idle = nextIdle(watched);
    await initializeAndWalkAway(watched.httpUrl);
    await idle;
    expect(connections[0]!.isClosed).to.equal(false);
    expect(never.clientCount).to.equal(1);
  });

  it('throws RangeError naming httpIdleTimeoutMs for a bad value', async () => {
    for (const httpIdleTimeoutMs of [-1, 1.5, 2 ** 31]) {
      const error = await rejectionOf<Error>(listenRemote({ httpIdleTimeoutMs }, () => {}));
      expect(error).to.be.instanceOf(RangeError);
      expect(error.message).to.match(/^httpIdleTimeoutMs /);
    }
  });
});

/** A POST whose body the test writes itself (so it can stay in progress). */
function startPost(url: string, connectionId: string, length: number): { request: ClientRequest; response: Promise<IncomingMessage> } {
  const request = httpRequest(url, {
    method: 'POST',
    agent: false,
    headers: { 'Content-Type': 'application/json', 'Content-Length': length, 'Acp-Connection-Id': connectionId },
  });
  request.flushHeaders();
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', (answer: IncomingMessage) => {
      answer.resume();
      answer.once('end', () => resolve(answer));
    });
    request.once('error', reject);
  });
  return { request, response };
}
