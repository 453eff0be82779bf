/**
 * A remote server at capacity: handshakes that race each other are admitted up to `maxClients`
 * and no further, and the ones refused get 503 with a `Retry-After`, at once.
 */
import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { RETRY_AFTER_SECONDS, listenRemote, type RemoteListener } from '../../lib';
import { expectTcpHandles, tcpHandles } from './remote-helpers';

const MAX_CLIENTS = 3;
/** How many handshakes beyond `MAX_CLIENTS` race the admitted ones. */
const EXTRA = 5;
const SILENT = { traces: false, log: () => {} };

/** What a handshake got: admitted, or refused with a status and its `Retry-After`. */
interface Outcome {
  readonly status: number;
  readonly retryAfter: string | null;
}

/** An `initialize` POST that opens a Streamable HTTP connection. */
async function initializePost(httpUrl: string): Promise<Outcome> {
  const response = await fetch(httpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } }),
  });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

/** A WebSocket upgrade: 101 once open (the socket is kept in `opened`), else the refusal. */
function upgrade(url: string, opened: WebSocket[]): Promise<Outcome> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on('error', () => {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      opened.push(ws);
      resolve({ status: 101, retryAfter: null });
    });
    ws.once('unexpected-response', (_request, response: IncomingMessage) => {
      response.resume();
      ws.terminate();
      resolve({ status: response.statusCode!, retryAfter: (response.headers['retry-after'] as string | undefined) ?? null });
    });
    ws.once('close', () => reject(new Error('the upgrade neither opened nor was refused')));
  });
}

function countOf(outcomes: readonly Outcome[], status: number): number {
  return outcomes.filter((outcome) => outcome.status === status).length;
}

describe('remote server capacity (maxClients)', () => {
  let baseline: number;
  let listener: RemoteListener | undefined;
  let reached: number;
  const sockets: WebSocket[] = [];

  async function listen(): Promise<RemoteListener> {
    listener = await listenRemote({ maxClients: MAX_CLIENTS, logger: SILENT }, (connection) => {
      reached++;
      connection.onRequest('initialize', () => ({ protocolVersion: 2 }));
    });
    return listener;
  }

  beforeEach(() => {
    baseline = tcpHandles();
    reached = 0;
  });

  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.terminate();
    await listener?.close();
    listener = undefined;
    await expectTcpHandles(baseline);
  });

  it(`admits exactly maxClients of ${MAX_CLIENTS + EXTRA} concurrent initialize POSTs; the rest get 503 with Retry-After`, async () => {
    const { httpUrl } = await listen();
    const outcomes = await Promise.all(Array.from({ length: MAX_CLIENTS + EXTRA }, () => initializePost(httpUrl)));
    expect(countOf(outcomes, 200), JSON.stringify(outcomes)).to.equal(MAX_CLIENTS);
    expect(outcomes.filter((outcome) => outcome.status !== 200)).to.deep.equal(
      Array.from({ length: EXTRA }, () => ({ status: 503, retryAfter: String(RETRY_AFTER_SECONDS) })),
    );
    expect(reached).to.equal(MAX_CLIENTS);
    expect(listener!.clientCount).to.equal(MAX_CLIENTS);
  });

  it(`admits exactly maxClients of ${MAX_CLIENTS + EXTRA} concurrent WebSocket upgrades; the rest get 503 with Retry-After`, async () => {
    const { url } = await listen();
    const outcomes = await Promise.all(Array.from({ length: MAX_CLIENTS + EXTRA }, () => upgrade(url, sockets)));
    expect(countOf(outcomes, 101), JSON.stringify(outcomes)).to.equal(MAX_CLIENTS);
    expect(outcomes.filter((outcome) => outcome.status !== 101)).to.deep.equal(
      Array.from({ length: EXTRA }, () => ({ status: 503, retryAfter: String(RETRY_AFTER_SECONDS) })),
    );
    expect(reached).to.equal(MAX_CLIENTS);
    expect(listener!.clientCount).to.equal(MAX_CLIENTS);
  });

  it('admits exactly maxClients of WebSocket upgrades and initialize POSTs racing each other', async () => {
    const { url, httpUrl } = await listen();
    const outcomes = await Promise.all(
      Array.from({ length: MAX_CLIENTS + EXTRA }, (_, i) => (i % 2 === 0 ? upgrade(url, sockets) : initializePost(httpUrl))),
    );
    expect(countOf(outcomes, 101) + countOf(outcomes, 200), JSON.stringify(outcomes)).to.equal(MAX_CLIENTS);
    expect(countOf(outcomes, 503)).to.equal(EXTRA);
    expect(reached).to.equal(MAX_CLIENTS);
  });
});
