/**
 * The Streamable HTTP transport: acp-wire's client and server together, and the server's answers
 * to raw requests (status codes as the official SDK's server gives them).
 */
import { expect } from 'chai';
import {
  ConnectionClosedError,
  HttpStatusError,
  connectHttp,
  listenRemote,
  type Connection,
  type RemoteClientInfo,
  type RemoteListener,
} from '../../lib';
import { rejectionOf } from '../helpers/async';
import { closeOf, expectTcpHandles, serveEcho, tcpHandles } from './remote-helpers';

const INITIALIZE = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 2 } };

describe('Streamable HTTP transport', () => {
  let baseline: number;
  let listener: RemoteListener;
  let accepted: { connection: Connection; info: RemoteClientInfo; closed: ReturnType<typeof closeOf> }[];

  beforeEach(async () => {
    baseline = tcpHandles();
    accepted = [];
    listener = await listenRemote({ transports: ['http'], maxPayload: 4096 }, (connection, info) => {
      accepted.push({ connection, info, closed: closeOf(connection) });
      serveEcho(connection);
      connection.onRequest('initialize', () => ({ protocolVersion: 2 }));
      connection.onRequest('session/new', () => ({ sessionId: `session-${accepted.length}` }));
      connection.onRequest('session/prompt', async ({ sessionId }: { sessionId: string }) => {
        connection.sendNotification('session/update', { sessionId, update: { n: 1 } });
        const answer = await connection.sendRequest('client/ask', { sessionId, question: 'ok?' });
        connection.sendNotification('session/update', { sessionId, update: { n: 2 } });
        return { answer };
      });
    });
  });

  afterEach(async () => {
    await listener.close();
    await expectTcpHandles(baseline);
  });

  /** POSTs a raw message; returns the status and body. */
  async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
    const response = await fetch(listener.httpUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, text: await response.text(), headers: response.headers };
  }

  describe('connectHttp() with listenRemote()', () => {
    it('runs initialize, a session with updates and a request to the client, in order', async () => {
      const client = connectHttp(listener.httpUrl);
      const updates: unknown[] = [];
      client.onNotification('session/update', (params) => void updates.push(params));
      client.onRequest('client/ask', ({ question }: { question: string }) => `yes: ${question}`);
      expect(await client.sendRequest('initialize', { protocolVersion: 2 })).to.deep.equal({ protocolVersion: 2 });
      const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/tmp', mcpServers: [] });
      expect(await client.sendRequest('session/prompt', { sessionId, prompt: [] })).to.deep.equal({ answer: 'yes: ok?' });
      expect(updates).to.deep.equal([
        { sessionId, update: { n: 1 } },
        { sessionId, update: { n: 2 } },
      ]);
      expect(accepted[0]!.info.transport).to.equal('http');
      await client.close();
      expect(await accepted[0]!.closed).to.deep.equal({ reason: 'input ended', error: undefined });
    });

    it('gives each HTTP connection its own state', async () => {
      const first = connectHttp(listener.httpUrl);
      const second = connectHttp(listener.httpUrl);
      await Promise.all([first.sendRequest('initialize', {}), second.sendRequest('initialize', {})]);
      first.sendNotification('only/first');
      second.sendNotification('only/second');
      expect(await first.sendRequest('notifications')).to.deep.equal(['only/first']);
      expect(await second.sendRequest('notifications')).to.deep.equal(['only/second']);
      expect(accepted[0]!.info.connectionId).to.not.equal(accepted[1]!.info.connectionId);
      await Promise.all([first.close(), second.close()]);
    });

    it('rejects pending requests with ConnectionClosedError when the server closes', async () => {
      const client = connectHttp(listener.httpUrl);
      await client.sendRequest('initialize', {});
      const sleeping = client.sendRequest('sleep', { ms: 60_000 });
      await client.sendRequest('echo');
      await listener.close();
      expect(await rejectionOf(sleeping))
        .to.be.instanceOf(ConnectionClosedError)
        .and.include({ method: 'sleep' });
    });

    it('closes with an HttpStatusError cause when the server refuses the token', async () => {
      await listener.close();
      listener = await listenRemote({ transports: ['http'], token: 'right' }, serveEcho);
      const client = connectHttp(listener.httpUrl, { token: 'wrong' });
      const closed = closeOf(client);
      const error = await rejectionOf<Error>(client.sendRequest('initialize', {}));
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(error.cause).to.be.instanceOf(HttpStatusError).and.include({ status: 401 });
      expect((await closed).reason).to.equal('input error');
    });

    it('closes with an error when the first message is not initialize', async () => {
      const client = connectHttp(listener.httpUrl);
      const error = await rejectionOf<Error>(client.sendRequest('echo'));
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(String((error.cause as Error).message)).to.match(/must be an initialize request/);
      expect(accepted).to.have.length(0);
    });

    it('validates its options', () => {
      expect(() => connectHttp('ws://127.0.0.1:1/acp')).to.throw(TypeError, /http:\/\/ or https:\/\//);
      expect(() => connectHttp(listener.httpUrl, { maxPayload: -1 })).to.throw(RangeError, /maxPayload/);
    });
  });

  describe('the server, to raw requests', () => {
    it('answers the initialize POST with the result and an Acp-Connection-Id', async () => {
      const { status, text, headers } = await post(INITIALIZE);
      expect(status).to.equal(200);
      expect(text).to.equal('{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}');
      expect(headers.get('acp-connection-id'))
        .to.equal(accepted[0]!.info.connectionId)
        .and.match(/^[0-9a-f-]{36}$/);
    });

    it('answers 202 to a message of a connection, 404 after its DELETE', async () => {
      const id = (await post(INITIALIZE)).headers.get('acp-connection-id')!;
      expect((await post({ jsonrpc: '2.0', method: 'note' }, { 'Acp-Connection-Id': id })).status).to.equal(202);
      const deleted = await fetch(listener.httpUrl, { method: 'DELETE', headers: { 'Acp-Connection-Id': id } });
      expect(deleted.status).to.equal(202);
      expect(await accepted[0]!.closed).to.deep.equal({ reason: 'input ended', error: undefined });
      expect((await post({ jsonrpc: '2.0', method: 'note' }, { 'Acp-Connection-Id': id })).status).to.equal(404);
    });

    it("refuses what the draft does not allow with the SDK server's statuses, and nothing reaches the agent", async () => {
      expect((await post(INITIALIZE, { 'Content-Type': 'text/plain' })).status).to.equal(415);
      expect(await post('{not json')).to.include({ status: 400, text: 'Invalid JSON' });
      expect(await post([INITIALIZE])).to.deep.include({
        status: 400,
        text: '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"JSON-RPC batches are not supported"}}',
      });
      expect(await post({ jsonrpc: '2.0', id: 1, method: 'echo' })).to.include({ status: 400, text: 'Missing Acp-Connection-Id' });
      expect(await post({ jsonrpc: '2.0', id: 1, method: 'echo' }, { 'Acp-Connection-Id': 'nope' })).to.include({ status: 404 });
      expect((await post({ ...INITIALIZE, params: { pad: 'x'.repeat(5000) } })).status).to.equal(413);
      expect((await fetch(listener.httpUrl, { method: 'PUT' })).status).to.equal(405);
      expect(accepted).to.have.length(0);
    });

    it('refuses a session message without its Acp-Session-Id, a second reader of a stream, and a GET without text/event-stream', async () => {
      const id = (await post(INITIALIZE)).headers.get('acp-connection-id')!;
      const prompt = { jsonrpc: '2.0', id: 1, method: 'session/prompt', params: { sessionId: 's', prompt: [] } };
      expect(await post(prompt, { 'Acp-Connection-Id': id })).to.include({ status: 400, text: 'Missing Acp-Session-Id' });
      expect(await post(prompt, { 'Acp-Connection-Id': id, 'Acp-Session-Id': 'other' })).to.include({
        status: 400,
        text: 'Mismatched Acp-Session-Id',
      });
      const controller = new AbortController();
      const events = await fetch(listener.httpUrl, {
        headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': id },
        signal: controller.signal,
      });
      expect(events.status).to.equal(200);
      const second = await fetch(listener.httpUrl, { headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': id } });
      expect(second.status).to.equal(409);
      await second.text();
      expect((await fetch(listener.httpUrl, { headers: { 'Acp-Connection-Id': id } })).status).to.equal(406);
      controller.abort();
      await events.body?.cancel().catch(() => {});
    });

    it('sends the answer of a POSTed request as one SSE event on the connection stream', async () => {
      const id = (await post(INITIALIZE)).headers.get('acp-connection-id')!;
      const events = await fetch(listener.httpUrl, { headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': id } });
      expect(events.headers.get('content-type')).to.equal('text/event-stream');
      expect(await post({ jsonrpc: '2.0', id: 'x', method: 'echo', params: [1] }, { 'Acp-Connection-Id': id })).to.include({ status: 202 });
      const reader = events.body!.getReader();
      const { value } = await reader.read();
      expect(Buffer.from(value!).toString('utf8')).to.equal('data: {"jsonrpc":"2.0","id":"x","result":[1]}\n\n');
      await fetch(listener.httpUrl, { method: 'DELETE', headers: { 'Acp-Connection-Id': id } });
      expect((await reader.read()).done).to.equal(true);
    });
  });
});
