/**
 * The Streamable HTTP client's event streams against raw servers: it opens a session's stream for
 * an answer that names the session (even with an escaped key), and since the streams arrive on
 * separate HTTP responses (through a load balancer, separate connections), their ends may arrive in
 * any order: a server that ends the connection's stream before a session's last answer.
 */
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectionClosedError, ResumeFailedError, connectHttp, type Connection } from '../../lib';
import { deferred, rejectionOf } from '../helpers/async';

/** Reads a request's JSON body. */
async function bodyOf(request: IncomingMessage): Promise<{ id?: number; method?: string }> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return JSON.parse(text) as { id?: number; method?: string };
}

function event(response: ServerResponse, message: unknown): void {
  response.write(`data: ${JSON.stringify(message)}\n\n`);
}

function openEventStream(response: ServerResponse): void {
  response.writeHead(200, { 'Content-Type': 'text/event-stream' });
  response.flushHeaders();
}

/** What a {@link rawServer} does beyond `initialize`, `DELETE` and opening event streams. */
interface RawServerHandlers {
  /** An event stream was opened: the connection's, or with `sessionId` a session's. */
  onStream(response: ServerResponse, sessionId: string | undefined): void;
  /** A message was posted (and answered 202) after `initialize`. */
  onMessage(message: { id?: number; method?: string }): void;
}

/** A raw Streamable HTTP server of one connection `c1`: `initialize` answered in its POST's body. */
function rawServer(handlers: RawServerHandlers): Server {
  return createServer((request, response) => {
    if (request.method === 'DELETE') return void response.writeHead(200).end();
    if (request.method === 'GET') {
      openEventStream(response);
      const sessionId = request.headers['acp-session-id'];
      return handlers.onStream(response, typeof sessionId === 'string' ? sessionId : undefined);
    }
    void bodyOf(request).then((message) => {
      if (message.method === 'initialize') {
        response.writeHead(200, { 'Content-Type': 'application/json', 'Acp-Connection-Id': 'c1' });
        return response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: 2 } }));
      }
      response.writeHead(202).end();
      handlers.onMessage(message);
    });
  });
}

/**
 * A server of one connection `c1` with one session `s1` that answers `session/prompt` by ending
 * the connection's event stream first, then writing the answer on the session's and ending it.
 */
function closingServer(): Server {
  let connectionStream: ServerResponse | undefined;
  let sessionStream: ServerResponse | undefined;
  return rawServer({
    onStream: (response, sessionId) => {
      if (sessionId === 's1') sessionStream = response;
      else connectionStream = response;
    },
    onMessage: (message) => {
      if (message.method === 'session/new') event(connectionStream!, { jsonrpc: '2.0', id: message.id, result: { sessionId: 's1' } });
      if (message.method === 'session/prompt') {
        connectionStream!.end();
        setTimeout(() => {
          event(sessionStream!, { jsonrpc: '2.0', id: message.id, result: { stopReason: 'end_turn' } });
          sessionStream!.end();
        }, 50);
      }
    },
  });
}

/**
 * A server of one connection `c1` that answers `session/new` on the connection's event stream with
 * `answerText` (its id spliced in), and tells `sessionGet` the session id of each event stream
 * opened for a session.
 */
function sessionServer(answerText: (id: number) => string, sessionGet: (sessionId: string) => void): Server {
  let connectionStream: ServerResponse | undefined;
  // Events written before the client's GET of the connection's stream wait for it.
  const waiting: string[] = [];
  const send = (text: string): void => {
    if (connectionStream) connectionStream.write(`data: ${text}\n\n`);
    else waiting.push(text);
  };
  return rawServer({
    onStream: (response, sessionId) => {
      if (sessionId !== undefined) return sessionGet(sessionId);
      connectionStream = response;
      for (const text of waiting.splice(0)) send(text);
    },
    onMessage: (message) => {
      if (message.method === 'echo') send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { echoed: true } }));
      if (message.method === 'session/new') send(answerText(message.id!));
    },
  });
}

describe('connectHttp() against a raw server', () => {
  let server: Server | undefined;
  let client: Connection | undefined;

  afterEach(async () => {
    await client?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  });

  /** Serves `raw` on 127.0.0.1 and connects an initialized client to it. */
  async function connectTo(raw: Server): Promise<Connection> {
    server = raw;
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    client = connectHttp(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/acp`);
    await client.sendRequest('initialize', { protocolVersion: 2 });
    return client;
  }

  describe('the session streams it opens', () => {
    /** A {@link sessionServer} and its client; `sessionGet`: the first session stream's id. */
    async function start(answerText: (id: number) => string): Promise<{ sessionGet: Promise<string> }> {
      const sessionGet = deferred<string>();
      await connectTo(sessionServer(answerText, sessionGet.resolve));
      // Wrapped: an async function returning the promise itself would wait for it.
      return { sessionGet: sessionGet.promise };
    }

    it('opens the stream of a session whose answer writes its sessionId key escaped (\\u0049 for I)', async () => {
      const { sessionGet } = await start((id) => `{"jsonrpc":"2.0","id":${id},"result":{"session\\u0049d":"s1"}}`);
      expect(await client!.sendRequest('session/new', { cwd: '/', mcpServers: [] })).to.deep.equal({ sessionId: 's1' });
      expect(await sessionGet).to.equal('s1');
    });

    it('delivers an answer without a sessionId and opens no stream for it, then opens the stream of a session named as such', async () => {
      let opened: string | undefined;
      const { sessionGet } = await start((id) => JSON.stringify({ jsonrpc: '2.0', id, result: { sessionId: 's2' } }));
      void sessionGet.then((sessionId) => (opened = sessionId));
      expect(await client!.sendRequest('echo', {})).to.deep.equal({ echoed: true });
      expect(opened).to.equal(undefined);
      expect(await client!.sendRequest('session/new', { cwd: '/', mcpServers: [] })).to.deep.equal({ sessionId: 's2' });
      expect(await sessionGet).to.equal('s2');
    });
  });

  describe('the requests it sends', () => {
    it("sends every request to the URL's path and query, with the URL's credentials as Basic authorization", async () => {
      const raw = sessionServer(
        (id) => JSON.stringify({ jsonrpc: '2.0', id, result: { sessionId: 's1' } }),
        () => {},
      );
      const seen: string[] = [];
      raw.prependListener('request', (request: IncomingMessage) => {
        seen.push(`${request.method} ${request.url} ${request.headers.authorization} ${request.headers.host}`);
      });
      server = raw;
      await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
      const port = (raw.address() as AddressInfo).port;
      client = connectHttp(`http://us%20er:p%40ss@127.0.0.1:${port}/acp/v1?tenant=a%20b`);
      await client.sendRequest('initialize', { protocolVersion: 2 });
      expect(await client.sendRequest('echo', {})).to.deep.equal({ echoed: true });
      await client.close();
      const basic = `Basic ${Buffer.from('us er:p@ss').toString('base64')}`;
      const expected = ['POST', 'GET', 'POST', 'DELETE'].map((method) => `${method} /acp/v1?tenant=a%20b ${basic} 127.0.0.1:${port}`);
      expect([...seen].sort()).to.deep.equal([...expected].sort());
    });
  });

  describe('a resumable connection the server no longer holds', () => {
    it('closes with a ResumeFailedError (refused) when a POST is answered 404, as a refused resume', async () => {
      const resumable = { transport: { resumable: { retentionMessages: 10, retentionSeconds: 60 } } };
      const raw = createServer((request, response) => {
        if (request.method === 'GET') return openEventStream(response);
        if (request.method === 'DELETE') return void response.writeHead(404).end();
        void bodyOf(request).then((message) => {
          if (message.method !== 'initialize') return void response.writeHead(404).end('Unknown Acp-Connection-Id');
          response.writeHead(200, { 'Content-Type': 'application/json', 'Acp-Connection-Id': 'c1' });
          response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: 2, capabilities: resumable } }));
        });
      });
      server = raw;
      await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
      client = connectHttp(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/acp`, { reconnect: { heartbeatMs: 0 } });
      await client.sendRequest('initialize', { protocolVersion: 2 });
      const error = await rejectionOf<ConnectionClosedError>(client.sendRequest('echo', {}));
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(error.cause).to.be.instanceOf(ResumeFailedError).and.include({ reason: 'refused', detail: 'Unknown Acp-Connection-Id' });
    });
  });

  describe('the ends of its event streams', () => {
    it("delivers a session's last answer that arrives after the connection's event stream has ended, then closes", async () => {
      const connection = await connectTo(closingServer());
      const { sessionId } = await connection.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
      const closed = new Promise<string>((resolve) => connection.once('close', (reason) => resolve(reason)));
      const answer = await connection.sendRequest('session/prompt', { sessionId, prompt: [] });
      expect(answer).to.deep.equal({ stopReason: 'end_turn' });
      expect(await closed).to.equal('input ended');
    });
  });
});
