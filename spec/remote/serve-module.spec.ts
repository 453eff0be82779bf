/**
 * `acp-wire serve --agent-module FILE`: one agent instance per client connection in serve's own
 * process (real processes: a `serve` child, clients over WebSocket and Streamable HTTP).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import WebSocket from 'ws';
import { connectHttp, connectWebSocket, type Connection } from '../../lib';
import { childProcesses } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, ROOT, childClosed, spawnScript, stopAll, useBuild, type SpawnedProcess } from '../helpers/processes';

/** The example agent module of docs/remote.md, compiled. */
const MODULE_AGENT = join(ROOT, 'dist', 'examples', 'module-agent.js');
/** An ES module that logs each instance's life on stderr (see the fixture). */
const FIXTURE = join(ROOT, 'spec', 'fixtures', 'agent-module.mjs');
const INIT_V1 = { protocolVersion: 1, clientInfo: { name: 'spec-client', version: '1.0.0' } };
type Message = Record<string, unknown>;

interface Serve extends SpawnedProcess {
  readonly url: string;
  readonly httpUrl: string;
}

/** Starts `acp-wire serve --agent-module MODULE <args>` and waits for its `listening` line. */
async function startServe(module: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Serve> {
  const spawned = spawnScript(CLI, ['serve', '--agent-module', module, ...args], { env });
  const first = await spawned.stdout.take();
  const match = /^listening (ws:\/\/127\.0\.0\.1:\d+\/acp)$/.exec(first);
  if (!match) throw new Error(`unexpected first line ${JSON.stringify(first)}; stderr: ${spawned.stderr.text}`);
  return { ...spawned, url: match[1]!, httpUrl: match[1]!.replace('ws://', 'http://') };
}

/** Stops serve with SIGTERM and returns its exit code. */
async function stopServe(serve: Serve): Promise<number | null> {
  serve.child.kill('SIGTERM');
  return (await serve.exited).code;
}

/** A raw WebSocket client: NDJSON messages, one per text frame, seen exactly as the server sent them. */
interface RawClient {
  readonly closed: Promise<{ code: number; reason: string }>;
  send(message: Message): void;
  /** Sends a request and resolves with its response. */
  request(id: number, method: string, params?: unknown): Promise<Message>;
  /** Resolves with the first message received (before or after now) that `match` accepts. */
  until(match: (message: Message) => boolean): Promise<Message>;
  close(): void;
}

const rawClients = new Set<WebSocket>();

/** Connects a raw client; `onMessage` sees every message as it arrives. */
async function connectRaw(url: string, onMessage: (message: Message) => void = () => {}): Promise<RawClient> {
  const ws = new WebSocket(url);
  rawClients.add(ws);
  const received: Message[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as Message;
    onMessage(message);
    received.push(message);
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => {
      rawClients.delete(ws);
      for (const wake of waiters) wake();
      resolve({ code, reason: String(reason) });
    }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const until = (match: (message: Message) => boolean): Promise<Message> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = received.find(match);
        if (found) return void (waiters.delete(check), resolve(found));
        if (ws.readyState === WebSocket.CLOSED) return void (waiters.delete(check), reject(new Error('closed before the message')));
      };
      waiters.add(check);
      check();
    });
  const send = (message: Message): void => ws.send(JSON.stringify({ jsonrpc: '2.0', ...message }));
  return {
    closed,
    send,
    until,
    request(id, method, params) {
      send({ id, method, params });
      return until((message) => message.id === id && !('method' in message));
    },
    close: () => ws.close(1000),
  };
}

/** POSTs one JSON-RPC message to a Streamable HTTP endpoint (no event stream opened). */
function post(url: string, message: Message, connectionId?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(connectionId === undefined ? {} : { 'Acp-Connection-Id': connectionId }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
}

describe('acp-wire serve --agent-module (real processes)', () => {
  useBuild();
  const connections = new Set<Connection>();
  const track = <T extends Connection>(connection: T): T => (connections.add(connection), connection);

  afterEach(async () => {
    await Promise.all([...connections].map((connection) => connection.close()));
    connections.clear();
    for (const ws of rawClients) ws.terminate();
    await stopAll();
  });

  describe('with the conformance agent as its module', () => {
    it('serves over WebSocket and Streamable HTTP, an instance per client with its own state, and no process per client', async () => {
      const serve = await startServe(CONFORMANCE_AGENT);
      const ws = track(await connectWebSocket(serve.url));
      const http = track(connectHttp(serve.httpUrl));
      const init = await ws.sendRequest<{ agentInfo: { name: string } }>('initialize', INIT_V1);
      expect(init.agentInfo.name).to.equal('acp-wire-conformance-agent');
      expect(await http.sendRequest('initialize', INIT_V1)).to.deep.equal(init);
      // A notification to one instance is not seen by the other.
      ws.sendNotification('only/websocket');
      expect(await ws.sendRequest('_test/received')).to.deep.equal({ notifications: [{ method: 'only/websocket' }] });
      expect(await http.sendRequest('_test/received')).to.deep.equal({ notifications: [] });
      expect(childProcesses(serve.child.pid!)).to.deep.equal([]);
      await Promise.all([ws.close(), http.close()]);
      expect(await stopServe(serve)).to.equal(0);
    });

    it('runs a turn to its end, ends one cancelled on session/cancel, and answers a $/cancel_request -32800 (WebSocket)', async () => {
      const serve = await startServe(CONFORMANCE_AGENT);
      const client = await connectRaw(serve.url);
      await client.request(1, 'initialize', INIT_V1);
      const { sessionId } = (await client.request(2, 'session/new', { cwd: '/', mcpServers: [] })).result as { sessionId: string };
      const prompt = (id: number, workMs: number) =>
        client.request(id, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'two words' }], _meta: { workMs } });
      expect(await prompt(3, 0)).to.deep.equal({ jsonrpc: '2.0', id: 3, result: { stopReason: 'end_turn' } });
      const long = prompt(4, 60_000);
      await client.until((message) => message.method === 'session/update');
      client.send({ method: 'session/cancel', params: { sessionId } });
      expect(await long).to.deep.equal({ jsonrpc: '2.0', id: 4, result: { stopReason: 'cancelled' } });
      const sleeping = client.request(5, '_test/sleep', { ms: 60_000 });
      client.send({ method: '$/cancel_request', params: { requestId: 5 } });
      expect(await sleeping).to.deep.equal({ jsonrpc: '2.0', id: 5, error: { code: -32800, message: 'Request cancelled' } });
      client.close();
      await client.closed;
      expect(await stopServe(serve)).to.equal(0);
    });

    it('runs a turn over Streamable HTTP', async () => {
      const serve = await startServe(CONFORMANCE_AGENT);
      const http = track(connectHttp(serve.httpUrl));
      await http.sendRequest('initialize', INIT_V1);
      const { sessionId } = await http.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
      const updates: unknown[] = [];
      http.onNotification('session/update', (params) => void updates.push(params));
      const answer = await http.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'over http' }] });
      expect(answer).to.deep.equal({ stopReason: 'end_turn' });
      expect(updates).to.have.length(3); // "echo: ", "over ", "http"
      await http.close();
      expect(await stopServe(serve)).to.equal(0);
    });

    it('drains on SIGTERM: a client mid-request gets its answer, then is closed 1001, and serve exits 0', async () => {
      const serve = await startServe(CONFORMANCE_AGENT);
      const busy = await connectRaw(serve.url);
      const idle = await connectRaw(serve.url);
      await busy.request(1, 'initialize', INIT_V1);
      const held = busy.request(2, '_test/hold', { ms: 300 });
      // The hold is in flight once the server has answered a later request on the same connection.
      await busy.request(3, '_test/echo', {});
      serve.child.kill('SIGTERM');
      expect((await idle.closed).code).to.equal(1001);
      expect(await held).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { held: true } });
      expect((await busy.closed).code).to.equal(1001);
      expect((await serve.exited).code).to.equal(0);
    });
  });

  describe('with examples/module-agent.ts', () => {
    /** Runs one v1 turn saying `text` and resolves with the text the agent streamed back. */
    async function turn(client: RawClient, id: number, sessionId: string, text: string): Promise<string> {
      const answer = await client.request(id, 'session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
      expect(answer).to.deep.equal({ jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } });
      return streamed.get(client)!.splice(0).join('');
    }
    const streamed = new Map<RawClient, string[]>();

    async function session(url: string): Promise<{ client: RawClient; sessionId: string }> {
      const client = await connectRaw(url, (message) => {
        const update = (message.params as { update?: { content?: { text?: string } } } | undefined)?.update;
        if (message.method === 'session/update' && update?.content?.text !== undefined) streamed.get(client)!.push(update.content.text);
      });
      streamed.set(client, []);
      await client.request(1, 'initialize', INIT_V1);
      const { sessionId } = (await client.request(2, 'session/new', { cwd: '/', mcpServers: [] })).result as { sessionId: string };
      return { client, sessionId };
    }

    it('gives each client an instance of its own: each counts its own turns', async () => {
      const serve = await startServe(MODULE_AGENT);
      const first = await session(serve.url);
      const second = await session(serve.url);
      expect(await turn(first.client, 3, first.sessionId, 'hello')).to.equal('Turn 1, you said: hello ');
      expect(await turn(first.client, 4, first.sessionId, 'again')).to.equal('Turn 2, you said: again ');
      expect(await turn(second.client, 3, second.sessionId, 'hi')).to.equal('Turn 1, you said: hi ');
      first.client.close();
      second.client.close();
      await Promise.all([first.client.closed, second.client.closed]);
      expect(await stopServe(serve)).to.equal(0);
    });
  });

  describe('instances', () => {
    it('holds what the client sent until an async factory is done, and disposes the instance once its client leaves', async () => {
      const serve = await startServe(FIXTURE);
      const first = await connectRaw(serve.url);
      const second = track(connectHttp(serve.httpUrl));
      // Sent before the factory (which waits 20 ms) has registered its handlers: answered all the same.
      expect(await first.request(1, 'initialize', INIT_V1)).to.have.nested.property('result.agentInfo.name', 'fixture-agent');
      await second.sendRequest('initialize', INIT_V1);
      const a = (await first.request(2, 'fixture/instance')).result as { instance: number };
      const b = await second.sendRequest<{ instance: number; transport: string }>('fixture/instance');
      expect([a, b]).to.deep.equal([
        { instance: 1, transport: 'websocket' },
        { instance: 2, transport: 'http' },
      ]);
      first.close();
      // Its signal aborts, then its dispose runs, once its connection has closed.
      await serve.stderr.findText(/^aborted 1 [\w-]+\ndisposed 1 [\w-]+ connection-closed=true$/m);
      expect(serve.stderr.text).to.not.match(/(aborted|disposed) 2/);
      expect(await second.sendRequest('fixture/instance')).to.deep.equal(b);
      await second.close();
      await serve.stderr.findText(/^disposed 2 [\w-]+ connection-closed=true$/m);
      expect(await stopServe(serve)).to.equal(0);
    });

    it('disposes every instance before it exits on SIGTERM', async () => {
      const serve = await startServe(FIXTURE);
      const clients = [await connectRaw(serve.url), await connectRaw(serve.url)];
      await Promise.all(clients.map((client) => client.request(1, 'initialize', INIT_V1)));
      expect(await stopServe(serve)).to.equal(0);
      expect(serve.stderr.text.match(/^disposed \d /gm)).to.have.length(2);
    });

    it('fails only the client whose factory throws: -32603 agent_failed_to_start, then closed; the others are served', async () => {
      const serve = await startServe(FIXTURE, [], { FIXTURE_FAIL: '2:throw' });
      const before = await connectRaw(serve.url);
      await before.request(1, 'initialize', INIT_V1);
      const failed = await connectRaw(serve.url);
      expect(await failed.request(1, 'initialize', INIT_V1)).to.deep.equal({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32603, message: 'Internal error', data: { reason: 'agent_failed_to_start' } },
      });
      await failed.closed;
      await serve.stderr.findText(/^acp-wire serve: the agent of client [\w-]+ could not be made: factory call 2 throws$/m);
      const after = await connectRaw(serve.url);
      expect(await after.request(1, 'fixture/instance')).to.have.nested.property('result.instance', 3);
      expect(await before.request(2, 'fixture/instance')).to.have.nested.property('result.instance', 1);
      expect(await stopServe(serve)).to.equal(0);
    });

    it('answers the initialize POST of a client whose factory rejects with the error, and serves the next one (Streamable HTTP)', async () => {
      const serve = await startServe(FIXTURE, [], { FIXTURE_FAIL: '1:reject' });
      const failed = await post(serve.httpUrl, { id: 1, method: 'initialize', params: INIT_V1 });
      expect(await failed.json()).to.deep.equal({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32603, message: 'Internal error', data: { reason: 'agent_failed_to_start' } },
      });
      await serve.stderr.findText(/could not be made: factory call 1 rejects$/m);
      const next = track(connectHttp(serve.httpUrl));
      await next.sendRequest('initialize', INIT_V1);
      expect(await next.sendRequest('fixture/instance')).to.deep.equal({ instance: 2, transport: 'http' });
      await next.close();
      expect(await stopServe(serve)).to.equal(0);
    });
    for (const [method, thrown] of [
      ['fixture/throwLater', 'throws in a timer'],
      ['fixture/rejectLater', 'rejects unhandled'],
    ] as const) {
      it(`fails only the instance that ${thrown} outside its handlers: its client is closed, the others are served`, async () => {
        const serve = await startServe(FIXTURE);
        const other = await connectRaw(serve.url);
        await other.request(1, 'initialize', INIT_V1);
        const failing = await connectRaw(serve.url);
        await failing.request(1, 'initialize', INIT_V1);
        expect(await failing.request(2, method)).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { scheduled: true } });
        await failing.closed;
        await serve.stderr.findText(
          new RegExp(`^acp-wire serve: the agent of client [\\w-]+ failed, its client is closed: instance 2 ${thrown}$`, 'm'),
        );
        await serve.stderr.findText(/^disposed 2 [\w-]+ connection-closed=true$/m);
        expect(await other.request(2, 'fixture/instance')).to.have.nested.property('result.instance', 1);
        const next = await connectRaw(serve.url);
        expect(await next.request(1, 'fixture/instance')).to.have.nested.property('result.instance', 3);
        expect(await stopServe(serve)).to.equal(0);
      });
    }

    it('exits 1 on an exception no instance threw, saying so', async () => {
      const serve = spawnScript(CLI, ['serve', '--agent-module', FIXTURE], { env: { FIXTURE_THROW_OUTSIDE: '1' } });
      expect((await childClosed(serve.child)).code).to.equal(1);
      expect(serve.stderr.text).to.match(
        /^acp-wire serve: uncaught exception outside any agent instance: Error: the module throws outside any instance$/m,
      );
    });
  });

  describe('the server around them', () => {
    it('requires the token, refuses clients beyond --max-clients with 503 and says "full" on /healthz', async () => {
      const serve = await startServe(FIXTURE, ['--max-clients', '1'], { ACP_WIRE_TOKEN: 'secret' });
      const health = new URL('/healthz', serve.httpUrl).href;
      expect((await post(serve.httpUrl, { id: 1, method: 'initialize', params: INIT_V1 })).status).to.equal(401);
      const client = track(await connectWebSocket(serve.url, { token: 'secret' }));
      await client.sendRequest('initialize', INIT_V1);
      expect(await (await fetch(health)).text()).to.equal('full');
      const refused = await fetch(serve.httpUrl, {
        method: 'POST',
        headers: { Authorization: 'Bearer secret', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_V1 }),
      });
      expect(refused.status).to.equal(503);
      await refused.arrayBuffer();
      await client.close();
      expect(await stopServe(serve)).to.equal(0);
    });

    it('closes a Streamable HTTP client that walked away (--http-idle-timeout) and disposes its instance', async () => {
      const serve = await startServe(FIXTURE, ['--http-idle-timeout', '200']);
      const response = await post(serve.httpUrl, { id: 1, method: 'initialize', params: INIT_V1 });
      expect(response.status).to.equal(200);
      await response.arrayBuffer();
      await serve.stderr.findText(/no event stream and no request for 200 ms/);
      await serve.stderr.findText(/^disposed 1 [\w-]+ connection-closed=true$/m);
      expect(await stopServe(serve)).to.equal(0);
    });
  });

  describe('misuse', () => {
    it('exits 2 with one line naming the problem, nothing started', async () => {
      const cases: [string[], string][] = [
        [['serve', '--agent-module', FIXTURE, 'node agent.js'], 'give an agent command or --agent-module, not both'],
        [['serve', '--agent-module', ''], '--agent-module needs a file'],
        [['serve', '--agent-module', 'no/such/module.js'], '--agent-module no/such/module.js: no such file'],
        [
          ['serve', '--agent-module', join(ROOT, 'spec', 'fixtures', 'announce-start.cjs')],
          `--agent-module ${join(ROOT, 'spec', 'fixtures', 'announce-start.cjs')} exports no createAgent function (nor a default function)`,
        ],
        [['serve'], 'give exactly one agent command (quote it) or --agent-module FILE, got 0'],
      ];
      for (const [args, problem] of cases) {
        const run = spawnScript(CLI, args);
        const { code } = await childClosed(run.child);
        // announce-start.cjs, loaded, writes its own line first.
        const stderr = run.stderr.text.replace(/^started \d+\n/, '');
        expect({ code, stdout: run.stdout.text, stderr }, args.join(' ')).to.deep.equal({
          code: 2,
          stdout: '',
          stderr: `acp-wire serve: ${problem} (see acp-wire serve --help)\n`,
        });
      }
    });

    it('exits 1 with one line when the module throws while it is loaded', async () => {
      const run = spawnScript(CLI, ['serve', '--agent-module', FIXTURE], { env: { FIXTURE_THROW_ON_LOAD: '1' } });
      const { code } = await childClosed(run.child);
      expect({ code, stdout: run.stdout.text, stderr: run.stderr.text }).to.deep.equal({
        code: 1,
        stdout: '',
        stderr: `acp-wire serve: cannot load --agent-module ${FIXTURE}: this module throws when it is loaded\n`,
      });
    });
  });
});
