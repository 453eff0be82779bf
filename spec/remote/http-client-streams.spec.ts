/**
 * The Streamable HTTP client's event streams arrive on separate HTTP responses (through a load
 * balancer, separate connections), so their ends may arrive in any order: a raw server that ends
 * the connection's stream before a session's last answer.
 */
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectHttp, type Connection } from '../../lib';

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
