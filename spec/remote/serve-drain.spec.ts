/**
 * `acp-wire serve` behind a load balancer: its health path, and its drain on SIGTERM (real
 * processes: a `serve` child running the conformance agent, raw WebSocket clients).
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import WebSocket from 'ws';
import { childProcesses } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, spawnScript, stopAll, useBuild, type SpawnedProcess } from '../helpers/processes';

const AGENT = `${process.execPath} ${CONFORMANCE_AGENT}`;
/** Version 1: a `session/prompt` is answered at the end of its turn. */
const INIT_V1 = { protocolVersion: 1, clientInfo: { name: 'spec-client', version: '1.0.0' } };

interface Serve extends SpawnedProcess {
  readonly url: string;
  readonly healthUrl: string;
}

/** Starts `acp-wire serve <args> AGENT` and waits for its `listening` line. */
async function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Serve> {
  const spawned = spawnScript(CLI, ['serve', ...args, AGENT], { env });
  const first = await spawned.stdout.take();
  const match = /^listening (ws:\/\/127\.0\.0\.1:(\d+)\/acp)$/.exec(first);
  if (!match) throw new Error(`unexpected first line ${JSON.stringify(first)}; stderr: ${spawned.stderr.text}`);
  return { ...spawned, url: match[1]!, healthUrl: `http://127.0.0.1:${match[2]}/healthz` };
}

/** An HTTP request's status, headers and body. */
async function fetchText(url: string, init: RequestInit = {}): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

/** A WebSocket upgrade's refusal: its status and `Retry-After`. */
function upgradeRefusal(url: string): Promise<{ status: number | undefined; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const { port, pathname } = new URL(url);
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: pathname,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    req.on('upgrade', (_response, socket) => {
      socket.destroy();
      reject(new Error('the upgrade was accepted'));
    });
    req.on('response', (response) => {
      response.resume();
      resolve({ status: response.statusCode, retryAfter: response.headers['retry-after'] as string | undefined });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw WebSocket client speaking NDJSON messages, one per text frame. */
interface RawClient {
  readonly ws: WebSocket;
  /** Resolves with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Every message received, in order. */
  readonly received: Array<Record<string, unknown>>;
  /** Sends a request and resolves with its response. */
  request(id: number, method: string, params?: unknown): Promise<Record<string, unknown>>;
  /** Resolves with the first message received (from now or before) that `match` accepts. */
  until(match: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

const clients = new Set<RawClient>();

async function connectRaw(url: string): Promise<RawClient> {
  const ws = new WebSocket(url);
  const received: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    received.push(JSON.parse(String(data)) as Record<string, unknown>);
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const until = (match: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = received.find(match);
        if (found) return void (waiters.delete(check), resolve(found));
        if (ws.readyState === WebSocket.CLOSED) return void (waiters.delete(check), reject(new Error('closed before the message')));
      };
      waiters.add(check);
      void closed.then(check);
      check();
    });
  const client: RawClient = {
    ws,
    closed,
    received,
    until,
    request(id, method, params) {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      return until((message) => message.id === id && !('method' in message));
    },
  };
  clients.add(client);
  void closed.then(() => clients.delete(client));
  return client;
}

/** Initializes (v1), opens a session and sends a prompt that works `workMs`; resolves once its turn has begun, with its answer to come. */
async function startTurn(client: RawClient, workMs: number): Promise<{ answer: Promise<Record<string, unknown>> }> {
  await client.request(1, 'initialize', INIT_V1);
  const session = (await client.request(2, 'session/new', { cwd: '/', mcpServers: [] })).result as { sessionId: string };
  const answer = client.request(3, 'session/prompt', {
    sessionId: session.sessionId,
    prompt: [{ type: 'text', text: 'work' }],
    _meta: { workMs },
  });
  await client.until((message) => message.method === 'session/update');
  return { answer };
}

/** Waits (polling /proc: another process's children have no event here) until `pid` has no child left. */
async function untilNoChildren(pid: number): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (childProcesses(pid).length === 0) return;
    await delay(25);
  }
  throw new Error(`process ${pid} still has children`);
}

/** Waits (polling: the server frees a slot after the client has seen its close) until health says `body`. */
async function untilHealth(url: string, body: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if ((await fetchText(url)).body === body) return;
    await delay(25);
  }
  throw new Error(`health never said ${body}`);
}

describe('acp-wire serve behind a load balancer (real processes)', () => {
  useBuild();

  afterEach(async () => {
    for (const client of clients) client.ws.terminate();
    await stopAll();
  });

  describe('GET /healthz', () => {
    it('answers 200 "ready" without the token, and refuses other methods', async () => {
      const serve = await startServe([], { ACP_WIRE_TOKEN: 'secret' });
      const health = await fetchText(serve.healthUrl);
      expect(health).to.include({ status: 200, body: 'ready' });
      expect(health.headers.get('cache-control')).to.equal('no-store');
      expect((await fetchText(serve.healthUrl, { method: 'POST' })).status).to.equal(405);
      // The agent's path still needs the token.
      expect((await fetchText(serve.url.replace('ws://', 'http://'), { method: 'POST', body: '{}' })).status).to.equal(401);
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).to.equal(0);
    });

    it('answers 503 "full" while --max-clients are served, and "ready" once one leaves', async () => {
      const serve = await startServe(['--max-clients', '1']);
      const client = await connectRaw(serve.url);
      expect(await fetchText(serve.healthUrl)).to.include({ status: 503, body: 'full' });
      client.ws.close();
      await client.closed;
      await untilHealth(serve.healthUrl, 'ready');
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).to.equal(0);
    });
  });

  describe('SIGTERM', () => {
    it('drains: refuses new clients 503, closes an idle client at once and a mid-turn one after its answer, then exits 0', async () => {
      const serve = await startServe([]);
      const busy = await connectRaw(serve.url);
      const idle = await connectRaw(serve.url);
      await idle.request(1, 'initialize', INIT_V1);
      expect(await fetchText(serve.healthUrl)).to.include({ status: 200, body: 'ready' });
      const { answer } = await startTurn(busy, 1500);
      serve.child.kill('SIGTERM');
      expect(await idle.closed).to.deep.equal({ code: 1001, reason: 'server shutting down' });
      expect(await fetchText(serve.healthUrl)).to.include({ status: 503, body: 'draining' });
      expect(await upgradeRefusal(serve.url)).to.deep.equal({ status: 503, retryAfter: '5' });
      const initialize = await fetchText(serve.url.replace('ws://', 'http://'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_V1 }),
      });
      expect(initialize.status).to.equal(503);
      expect(initialize.headers.get('retry-after')).to.equal('5');
      expect((await answer).result).to.deep.equal({ stopReason: 'end_turn' });
      expect(await busy.closed).to.deep.equal({ code: 1001, reason: 'server shutting down' });
      expect(await serve.exited).to.deep.equal({ code: 0, signal: null });
      expect(serve.stderr.text).to.not.match(/cut/);
    });

    it('drains, rather than dies, when sent as soon as the listening line is read', async () => {
      // The signal handlers are in place before the line: the default action (death by SIGTERM) never applies.
      for (let attempt = 0; attempt < 5; attempt++) {
        const serve = await startServe([]);
        serve.child.kill('SIGTERM');
        expect(await serve.exited).to.deep.equal({ code: 0, signal: null });
      }
    });

    it('cuts a client still mid-turn at --drain-timeout, ends its agent, says so and exits 3', async () => {
      const serve = await startServe(['--drain-timeout', '100']);
      const client = await connectRaw(serve.url);
      const { answer } = await startTurn(client, 60_000);
      const unanswered = answer.catch(() => 'closed');
      serve.child.kill('SIGTERM');
      expect((await client.closed).code).to.equal(1001);
      await untilNoChildren(serve.child.pid!);
      expect(await serve.exited).to.deep.equal({ code: 3, signal: null });
      expect(serve.stderr.text).to.match(/drained 1 client: cut 1 still in a request at the drain deadline \(100 ms\)/);
      expect(await unanswered).to.equal('closed');
    });

    it('cuts at once on a second signal during the drain', async () => {
      const serve = await startServe([]);
      const client = await connectRaw(serve.url);
      void (await startTurn(client, 60_000)).answer.catch(() => undefined);
      serve.child.kill('SIGTERM');
      await untilHealth(serve.healthUrl, 'draining');
      serve.child.kill('SIGINT');
      expect(await serve.exited).to.deep.equal({ code: 143, signal: null });
      await client.closed;
    });
  });
});
