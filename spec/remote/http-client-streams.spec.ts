/**
 * The Streamable HTTP client's event streams arrive on separate HTTP responses (through a load
 * balancer, separate connections), so their ends may arrive in any order: a raw server that ends
 * the connection's stream before a session's last answer.
 */
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectHttp, type Connection } from '../../lib';
import { deferred } from '../helpers/async';

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

/**
 * A server of one connection `c1` with one session `s1` that answers `session/prompt` by ending
 * the connection's event stream first, then writing the answer on the session's and ending it.
 */
function closingServer(): Server {
  let connectionStream: ServerResponse | undefined;
  let sessionStream: ServerResponse | undefined;
  return createServer((request, response) => {
    if (request.method === 'DELETE') return void response.writeHead(200).end();
    if (request.method === 'GET') {
      openEventStream(response);
      if (request.headers['acp-session-id'] === 's1') sessionStream = response;
      else connectionStream = response;
      return;
    }
    void bodyOf(request).then((message) => {
      if (message.method === 'initialize') {
        response.writeHead(200, { 'Content-Type': 'application/json', 'Acp-Connection-Id': 'c1' });
        return response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: 2 } }));
      }
      response.writeHead(202).end();
      if (message.method === 'session/new') event(connectionStream!, { jsonrpc: '2.0', id: message.id, result: { sessionId: 's1' } });
      if (message.method === 'session/prompt') {
        connectionStream!.end();
        setTimeout(() => {
          event(sessionStream!, { jsonrpc: '2.0', id: message.id, result: { stopReason: 'end_turn' } });
          sessionStream!.end();
        }, 50);
      }
    });
  });
}

/**
 * A server of one connection `c1` that answers `session/new` on the connection's event stream with
 * `answerText` (its id spliced in) and resolves `sessionGet` with the session id of the first
 * event stream opened for a session.
 */
function sessionServer(answerText: (id: number) => string, sessionGet: (sessionId: string) => void): Server {
  let connectionStream: ServerResponse | undefined;
  // Events written before the client's GET of the connection's stream wait for it.
  const waiting: string[] = [];
  const send = (text: string): void => {
    if (connectionStream) connectionStream.write(`data: ${text}\n\n`);
    else waiting.push(text);
  };
  return createServer((request, response) => {
    if (request.method === 'DELETE') return void response.writeHead(200).end();
    if (request.method === 'GET') {
      openEventStream(response);
      const sessionId = request.headers['acp-session-id'];
      if (typeof sessionId === 'string') return sessionGet(sessionId);
      connectionStream = response;
      for (const text of waiting.splice(0)) send(text);
      return;
    }
    void bodyOf(request).then((message) => {
      if (message.method === 'initialize') {
        response.writeHead(200, { 'Content-Type': 'application/json', 'Acp-Connection-Id': 'c1' });
        return response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: 2 } }));
      }
      response.writeHead(202).end();
      if (message.method === 'echo') send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { echoed: true } }));
      if (message.method === 'session/new') send(answerText(message.id!));
    });
  });
}

describe('connectHttp(): the session streams it opens', () => {
  let server: Server | undefined;
  let client: Connection | undefined;

  afterEach(async () => {
    await client?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  });

  async function start(answerText: (id: number) => string): Promise<{ sessionGet: Promise<string> }> {
    const sessionGet = deferred<string>();
    server = sessionServer(answerText, sessionGet.resolve);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    client = connectHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/acp`);
    await client.sendRequest('initialize', { protocolVersion: 2 });
    // Wrapped: an async function returning the promise itself would wait for it.
    return { sessionGet: sessionGet.promise };
  }

  it('opens the stream of a session whose answer writes its sessionId key escaped (\\u0049 for I)', async () => {
    const { sessionGet } = await start((id) => `{"jsonrpc":"2.0","id":${id},"result":{"session\\u0049d":"s1"}}`);
    expect(await client!.sendRequest('session/new', { cwd: '/', mcpServers: [] })).to.deep.equal({ sessionId: 's1' });
    expect(await sessionGet).to.equal('s1');
  });

  it('delivers an answer without a sessionId (not parsed for routing) and opens the stream of a session named as such', async () => {
    let opened: string | undefined;
    const { sessionGet } = await start((id) => JSON.stringify({ jsonrpc: '2.0', id, result: { sessionId: 's2' } }));
    void sessionGet.then((sessionId) => (opened = sessionId));
    expect(await client!.sendRequest('echo', {})).to.deep.equal({ echoed: true });
    expect(opened).to.equal(undefined);
    expect(await client!.sendRequest('session/new', { cwd: '/', mcpServers: [] })).to.deep.equal({ sessionId: 's2' });
    expect(await sessionGet).to.equal('s2');
  });
});

describe('connectHttp(): the ends of its event streams', () => {
  let server: Server | undefined;
  let client: Connection | undefined;

  afterEach(async () => {
    await client?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  });

  it("delivers a session's last answer that arrives after the connection's event stream has ended, then closes", async () => {
    server = closingServer();
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    client = connectHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}/acp`);
    await client.sendRequest('initialize', { protocolVersion: 2 });
    const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
    const closed = new Promise<string>((resolve) => client!.once('close', (reason) => resolve(reason)));
    const answer = await client.sendRequest('session/prompt', { sessionId, prompt: [] });
    expect(answer).to.deep.equal({ stopReason: 'end_turn' });
    expect(await closed).to.equal('input ended');
  });
});
