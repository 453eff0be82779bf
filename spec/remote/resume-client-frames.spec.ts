/**
 * What a reconnecting client's connection sees of a resumable server's messages: the agent's own,
 * without the transport's cursor, including an agent message whose method looks like one of the
 * transport's control messages.
 */
import { expect } from 'chai';
import { connectHttp, connectWebSocket, listenRemote, type Connection, type RemoteListener } from '../../lib';
import { expectTcpHandles, tcpHandles } from './remote-helpers';

describe('A reconnecting client reads the agent, not the transport', () => {
  let baseline: number;
  let listener: RemoteListener;
  let client: Connection | undefined;

  beforeEach(async () => {
    baseline = tcpHandles();
    listener = await listenRemote({ heartbeat: false, resume: true }, (connection) => {
      connection.onRequest('initialize', () => ({ protocolVersion: 2, capabilities: {} }));
      connection.onRequest('_test/notify', () => {
        connection.sendNotification('stream/ack', { received: 99 });
        // An agent's own _meta after other members: the cursor goes into it (over HTTP, a message
        // without a session goes on the connection's stream).
        connection.sendNotification('_test/update', { n: 1, _meta: { trace: 't' } });
        connection.sendNotification('_test/update', { n: 2, _meta: {} });
        return { ok: true };
      });
    });
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await listener.close();
    await expectTcpHandles(baseline);
  });

  for (const transport of ['websocket', 'http'] as const) {
    it(`${transport}: results and notifications arrive as the agent sent them, an agent's own stream/ack included`, async () => {
      client =
        transport === 'websocket'
          ? await connectWebSocket(listener.url, { heartbeat: false, reconnect: {} })
          : connectHttp(listener.httpUrl, { reconnect: {} });
      const acks: unknown[] = [];
      const updates: unknown[] = [];
      let onBothUpdates = (): void => {};
      const bothUpdates = new Promise<void>((resolve) => (onBothUpdates = resolve));
      client.onNotification('stream/ack', (params) => void acks.push(params));
      client.onNotification('_test/update', (params) => {
        if (updates.push(params) === 2) onBothUpdates();
      });
      await client.sendRequest('initialize', { protocolVersion: 2 });
      expect(await client.sendRequest('_test/notify', {})).to.deep.equal({ ok: true });
      // The agent sent the stream/ack notification before the updates, on the same stream.
      await bothUpdates;
      expect(acks).to.deep.equal([{ received: 99 }]);
      expect(updates).to.deep.equal([
        { n: 1, _meta: { trace: 't' } },
        { n: 2, _meta: {} },
      ]);
    });
  }
});
