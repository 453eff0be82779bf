/**
 * The second Streamable HTTP dialect of the remote server, spoken with plain `fetch` as
 * acp-http-client speaks it: the connection id in the URL path, each request's answer in its
 * POST's response body, everything else the agent sends on one GET event stream.
 */
import { expect } from 'chai';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { connectHttp, listenRemote, type Connection, type RemoteClientInfo, type RemoteListener } from '../../lib';
import { closeOf, expectTcpHandles, tcpHandles } from './remote-helpers';

const INITIALIZE = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } };
/** What acp-http-client sends with each POST. */
const POST_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };
/** How long a spec waits for one event of a stream. */
const EVENT_WAIT_MS = 5000;

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

/** An event stream read with `fetch`: each `data:` event parsed as one message, in order. */
class EventStream {
  readonly status: number;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';

  constructor(response: Response) {
    this.status = response.status;
    this.#reader = response.body!.getReader();
  }

  /** The next message, or `undefined` when the stream ends; rejects after {@link EVENT_WAIT_MS}. */
  async next(): Promise<Record<string, unknown> | undefined> {
    const deadline = Date.now() + EVENT_WAIT_MS;
    for (;;) {
      const end = this.#buffer.indexOf('\n\n');
      if (end !== -1) {
        const event = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6));
        if (data.length > 0) return JSON.parse(data.join('\n')) as Record<string, unknown>;
        continue;
      }
      const chunk = await this.#read(deadline - Date.now());
      if (chunk === undefined) return undefined;
      this.#buffer += this.#decoder.decode(chunk, { stream: true });
    }
  }

  /** Stops reading (the GET's socket is released). */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }

  async #read(waitMs: number): Promise<Uint8Array | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no event within ${EVENT_WAIT_MS} ms`)), Math.max(waitMs, 0));
    });
    try {
      const { done, value } = await Promise.race([this.#reader.read(), timeout]);
      return done ? undefined : value;
    } finally {
      clearTimeout(timer);
    }
  }
}

describe('Streamable HTTP with the connection id in the path (the acp-http-client dialect)', () => {
  let baseline: number;
  let listener: RemoteListener;
  let accepted: { connection: Connection; info: RemoteClientInfo; closed: ReturnType<typeof closeOf> }[];
  const opened: EventStream[] = [];

  beforeEach(async () => {
    baseline = tcpHandles();
    accepted = [];
    listener = await listenRemote({ transports: ['http'], maxPayload: 4096 }, (connection, info) => {
      accepted.push({ connection, info, closed: closeOf(connection) });
      serveConformanceAgent(connection);
    });
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((stream) => stream.cancel()));
    await listener.close();
    await expectTcpHandles(baseline);
  });

  function urlOf(id: string): string {
    return `${listener.httpUrl}/${id}`;
  }

  async function post(id: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(urlOf(id), {
      method: 'POST',
      headers: { ...POST_HEADERS, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, text: await response.text(), headers: response.headers };
  }

  /** Opens the GET event stream of `id` (it may come before the connection's initialize). */
  async function events(id: string, headers: Record<string, string> = { Accept: 'text/event-stream' }): Promise<EventStream> {
    const stream = new EventStream(await fetch(urlOf(id), { headers }));
    opened.push(stream);
    return stream;
  }

  async function request(id: string, requestId: number | string, method: string, params?: unknown): Promise<Answer> {
    return post(id, { jsonrpc: '2.0', id: requestId, method, params });
  }

  /** Opens connection `id` as acp-http-client does (its GET first) and creates a session. */
  async function session(id: string): Promise<{ stream: EventStream; sessionId: string }> {
    const stream = await events(id);
    expect((await post(id, INITIALIZE)).status).to.equal(200);
    const created = await request(id, 1, 'session/new', { cwd: '/tmp', mcpServers: [] });
    return { stream, sessionId: (JSON.parse(created.text) as { result: { sessionId: string } }).result.sessionId };
  }

  /**
   * POSTs a long prompt and resolves once its first update is on `stream` (the agent runs it: the
   * POSTs of one client race each other), with its pending answer.
   */
  async function runningTurn(
    id: string,
    requestId: number | string,
    stream: EventStream,
    sessionId: string,
  ): Promise<{ answer: Promise<Answer> }> {
    const prompt = { sessionId, prompt: [{ type: 'text', text: 'a b c d' }], _meta: { workMs: 60_000 } };
    const answer = request(id, requestId, 'session/prompt', prompt);
    expect(await stream.next()).to.have.nested.property('params.update.content.text', 'echo: ');
    return { answer };
  }

  describe('a connection', () => {
    it('answers initialize in the POST body, without Acp-Connection-Id, and names the connection by its path', async () => {
      const { status, text, headers } = await post('conn-1', INITIALIZE);
      expect(status).to.equal(200);
      expect(headers.get('content-type')).to.equal('application/json');
      expect(JSON.parse(text)).to.deep.include({ jsonrpc: '2.0', id: 0 }).and.have.nested.property('result.protocolVersion', 1);
      expect(headers.has('acp-connection-id')).to.equal(false);
      expect(accepted.map(({ info }) => [info.transport, info.connectionId])).to.deep.equal([['http', 'conn-1']]);
    });

    it('streams a turn on the GET opened before initialize, and answers the prompt in its POST body', async () => {
      const { stream, sessionId } = await session('conn-1');
      const prompt = { sessionId, prompt: [{ type: 'text', text: 'hello there' }] };
      const answer = await request('conn-1', 2, 'session/prompt', prompt);
      expect(answer).to.include({ status: 200, text: '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}' });
      const chunks: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const update = await stream.next();
        expect(update).to.include({ method: 'session/update' }).and.have.nested.property('params.sessionId', sessionId);
        chunks.push((update!.params as { update: { content: { text: string } } }).update.content.text);
      }
      expect(chunks).to.deep.equal(['echo: ', 'hello ', 'there']);
    });

    it('answers session/cancel 202 and the cancelled prompt in its POST body', async () => {
      const { stream, sessionId } = await session('conn-1');
      const { answer: turn } = await runningTurn('conn-1', 2, stream, sessionId);
      expect(await post('conn-1', { jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } })).to.include({
        status: 202,
        text: '',
      });
      expect(await turn).to.include({ status: 200, text: '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}' });
    });

    it('answers $/cancel_request 202 and the cancelled request -32800 in its POST body', async () => {
      const { stream, sessionId } = await session('conn-1');
      const { answer: turn } = await runningTurn('conn-1', 'turn-1', stream, sessionId);
      expect(await post('conn-1', { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'turn-1' } })).to.include({
        status: 202,
        text: '',
      });
      const { status, text } = await turn;
      expect(status).to.equal(200);
      expect(JSON.parse(text)).to.deep.include({ id: 'turn-1', error: { code: -32800, message: 'Request cancelled' } });
    });

    it('sends requests from the agent on the event stream and takes their answers with 202', async () => {
      const stream = await events('conn-1');
      await post('conn-1', INITIALIZE);
      const calling = request('conn-1', 'call', '_test/callClient', { method: 'client/ask', params: { q: 1 } });
      const asked = await stream.next();
      expect(asked)
        .to.include({ jsonrpc: '2.0', method: 'client/ask' })
        .and.deep.include({ params: { q: 1 } });
      expect(await post('conn-1', { jsonrpc: '2.0', id: asked!.id, result: { yes: true } })).to.include({ status: 202, text: '' });
      expect(await calling).to.include({ status: 200, text: '{"jsonrpc":"2.0","id":"call","result":{"response":{"yes":true}}}' });
    });

    it('ends the connection on DELETE (202), its event stream with it; the id is then unknown (404)', async () => {
      const stream = await events('conn-1');
      await post('conn-1', INITIALIZE);
      expect((await fetch(urlOf('conn-1'), { method: 'DELETE', headers: { Accept: 'application/json' } })).status).to.equal(202);
      expect(await accepted[0]!.closed).to.deep.equal({ reason: 'input ended', error: undefined });
      expect(await stream.next()).to.equal(undefined);
      expect(await request('conn-1', 1, 'session/new', {})).to.include({ status: 404, text: 'Unknown connection id' });
      expect((await fetch(urlOf('conn-1'), { method: 'DELETE' })).status).to.equal(404);
    });

    it('answers 500 with a JSON-RPC error to a request still waiting when the connection ends', async () => {
      const { stream, sessionId } = await session('conn-1');
      const { answer: turn } = await runningTurn('conn-1', 7, stream, sessionId);
      await accepted[0]!.connection.close();
      const { status, text } = await turn;
      expect(status).to.equal(500);
      expect(JSON.parse(text)).to.deep.include({ id: 7 }).and.have.nested.property('error.code', -32603);
    });

    it('serves the Acp-Connection-Id dialect on the same listener, each connection with its own agent', async () => {
      await post('conn-1', INITIALIZE);
      const client = connectHttp(listener.httpUrl);
      await client.sendRequest('initialize', { protocolVersion: 1 });
      expect(await client.sendRequest('_test/echo', { from: 'headers' })).to.deep.equal({ from: 'headers' });
      expect(await request('conn-1', 1, '_test/echo', { from: 'path' })).to.include({
        text: '{"jsonrpc":"2.0","id":1,"result":{"from":"path"}}',
      });
      expect(accepted.map(({ info }) => info.connectionId))
        .to.have.length(2)
        .and.include('conn-1');
      await client.close();
    });
  });

  describe('refusals (a clear 4xx; nothing reaches an agent; the server goes on)', () => {
    it('refuses a request that mixes in the Acp-Connection-Id dialect', async () => {
      await post('conn-1', INITIALIZE);
      const mixed = 'Acp-Connection-Id and Acp-Session-Id are not used when the connection id is in the path';
      expect(await post('conn-1', { jsonrpc: '2.0', id: 1, method: '_test/echo' }, { 'Acp-Connection-Id': 'conn-1' })).to.include({
        status: 400,
        text: mixed,
      });
      expect(
        await post('conn-1', { jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 's' } }, { 'Acp-Session-Id': 's' }),
      ).to.include({
        status: 400,
        text: mixed,
      });
      expect((await events('conn-1', { Accept: 'text/event-stream', 'Acp-Connection-Id': 'conn-1' })).status).to.equal(400);
      expect(await post('other', INITIALIZE, { 'Acp-Connection-Id': 'other' })).to.include({ status: 400 });
      expect(accepted).to.have.length(1);
    });

    it('refuses malformed bodies as on the Acp-Connection-Id dialect', async () => {
      expect((await post('conn-1', INITIALIZE, { 'Content-Type': 'text/plain' })).status).to.equal(415);
      expect(await post('conn-1', '{not json')).to.include({ status: 400, text: 'Invalid JSON' });
      expect((await post('conn-1', [INITIALIZE])).status).to.equal(400);
      expect(await post('conn-1', '42')).to.include({ status: 400, text: 'Invalid JSON-RPC message' });
      expect((await post('conn-1', { ...INITIALIZE, params: { pad: 'x'.repeat(5000) } })).status).to.equal(413);
      expect(await post('conn-1', { ...INITIALIZE, id: null })).to.include({ status: 400 });
      expect((await fetch(urlOf('conn-1'), { method: 'PUT' })).status).to.equal(405);
      expect(accepted).to.have.length(0);
    });

    it('refuses an unknown id (404), a second initialize (409), a duplicate request id in flight (409), an invalid request id (400), a GET without text/event-stream (406) and a second reader (409)', async () => {
      expect(await request('nobody', 1, '_test/echo')).to.include({ status: 404, text: 'Unknown connection id' });
      expect((await fetch(urlOf('nobody'), { method: 'DELETE' })).status).to.equal(404);
      const { stream, sessionId } = await session('conn-1');
      expect(await post('conn-1', { ...INITIALIZE, id: 1 })).to.include({ status: 409, text: 'Connection id already in use' });
      const { answer: turn } = await runningTurn('conn-1', 5, stream, sessionId);
      expect(await request('conn-1', 5, '_test/echo', {})).to.include({
        status: 409,
        text: 'A request with this id is already waiting for its answer',
      });
      expect(await request('conn-1', { not: 'an id' } as never, '_test/echo', {})).to.include({ status: 400, text: 'Invalid request id' });
      expect((await fetch(urlOf('conn-1'), { headers: { Accept: 'application/json' } })).status).to.equal(406);
      const second = await fetch(urlOf('conn-1'), { headers: { Accept: 'text/event-stream' } });
      expect(second.status).to.equal(409);
      await second.text();
      await post('conn-1', { jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      expect((await turn).text).to.equal('{"jsonrpc":"2.0","id":5,"result":{"stopReason":"cancelled"}}');
      expect(accepted).to.have.length(1);
    });

    it('lets at most 64 GETs wait for their connection (503 beyond), and a DELETE ends a waiting one', async () => {
      const waiting = await Promise.all(Array.from({ length: 64 }, (_, i) => events(`early-${i}`)));
      expect(waiting.map((stream) => stream.status)).to.deep.equal(Array(64).fill(200));
      const refused = await fetch(urlOf('early-64'), { headers: { Accept: 'text/event-stream' } });
      expect(await refused.text()).to.equal('Too many streams waiting for their connection');
      expect(refused.status).to.equal(503);
      expect((await fetch(urlOf('early-0'), { method: 'DELETE' })).status).to.equal(404);
      expect(await waiting[0]!.next()).to.equal(undefined);
      expect((await events('early-64')).status).to.equal(200);
      expect(accepted).to.have.length(0);
    });

    it('answers 404 to a path that is not PATH/<id>', async () => {
      for (const path of ['/acp/', '/acp/a/b', '/acp/a%20b/', '/acpx', `/acp/${'x'.repeat(129)}`]) {
        const response = await fetch(`http://127.0.0.1:${listener.port}${path}`, {
          method: 'POST',
          headers: POST_HEADERS,
          body: JSON.stringify(INITIALIZE),
        });
        expect(response.status, path).to.equal(404);
        await response.text();
      }
      expect(accepted).to.have.length(0);
    });
  });
});
