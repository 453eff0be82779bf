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

describe('Resumable Streamable HTTP wire (a reconnecting client)', () => {
  let baseline: number;
  let listener: RemoteListener;
  let client: Connection | undefined;
  let connectionId: string;

  beforeEach(async () => {
    baseline = tcpHandles();
    listener = await listenRemote({ heartbeat: false, resume: { bufferMessages: 1000, graceMs: 5000 } }, (connection, info) => {
      connectionId = info.connectionId;
      serveConformanceAgent(connection);
    });
  });
  afterEach(async () => {
    await client?.close();
    await listener.close();
    await expectTcpHandles(baseline);
  });

  it('tells the server the last event received every 16 events, and the server lets go of the events up to it', async () => {
    client = connectHttp(listener.httpUrl, { reconnect: {} });
    await client.sendRequest('initialize', { protocolVersion: 2 });
    // Answers on the connection's stream: each POST after the 16th event (or 16 more since the
    // last told) says the last one received, so the last POST told at least the 115th.
    for (let i = 0; i < 131; i++) await client.sendRequest('_test/echo', { i });
    // A resume before what the client said it has is refused. Without the acknowledgements
    // those events would be held (the buffer keeps 1,000) and the resume answered.
    expect(await resumeStatus(listener.httpUrl, connectionId, '5')).to.equal(409);
    expect(await resumeStatus(listener.httpUrl, connectionId, '100')).to.equal(409);
  });
});
