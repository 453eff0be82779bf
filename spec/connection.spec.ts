import { expect } from 'chai';
import { ConnectionClosedError, RpcError, createConnectionPair, type Connection } from '../lib';

describe('Connection', () => {
  let client: Connection;
  let agent: Connection;
  beforeEach(() => {
    [client, agent] = createConnectionPair();
  });
  afterEach(async () => {
    await Promise.all([client.close(), agent.close()]);
  });

  describe('#sendRequest()', () => {
    it('resolves with the result the handler returns', async () => {
      agent.onRequest('echo', (params) => params);
      expect(await client.sendRequest('echo', { a: [1, 'x'] })).to.deep.equal({ a: [1, 'x'] });
    });

    it('rejects with RpcError -32601 naming the method when no handler exists', async () => {
      const error = await client.sendRequest('missing').then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(RpcError).and.include({ code: -32601, message: 'Method not found', data: 'missing' });
    });

    it('rejects with ConnectionClosedError naming the method when the peer closes first', async () => {
      agent.onRequest('never', (_params, responder) => void setTimeout(() => responder, 1e6).unref());
      const sent = client.sendRequest('never');
      void agent.close();
      const error = await sent.then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'never', reason: 'input ended' });
    });
  });
});
