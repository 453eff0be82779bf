/**
 * The method → handler table (lib/requests/router.ts), observed through the Connection methods that expose
 * it: which handler a message reaches, and what registering and disposing does.
 */
import { expect } from 'chai';
import { RpcError, createConnectionPair, type Connection, type NotificationMessage } from '../lib';
import { deferred } from './helpers/async';

/** The code of the error a request is answered with, or 'ok:<result>' for a result. */
function outcome(promise: PromiseLike<unknown>): Promise<string> {
  return Promise.resolve(promise).then(
    (result) => `ok:${JSON.stringify(result)}`,
    (error: unknown) => (error instanceof RpcError ? String(error.code) : String(error)),
  );
}

describe('Router', () => {
  let client: Connection;
  let agent: Connection;
  beforeEach(() => {
    [client, agent] = createConnectionPair();
  });
  afterEach(() => Promise.all([client.close(), agent.close()]));

  /** Sends `method` as a notification followed by a request that flushes the order of delivery. */
  async function notify(method: string, params?: unknown): Promise<void> {
    client.sendNotification(method, params);
    await outcome(client.sendRequest('$/flush'));
  }

  describe('#onRequest()', () => {
    it('passes the params and a responder carrying the id and method to the handler', async () => {
      const seen = deferred<[unknown, unknown, string]>();
      agent.onRequest('m', (params, responder) => {
        seen.resolve([params, responder.id, responder.method]);
        return 'ok';
      });
      const sent = client.sendRequest('m', { p: [1, 2] });
      expect(await sent).to.equal('ok');
      expect(await seen.promise).to.deep.equal([{ p: [1, 2] }, sent.id, 'm']);
    });

    it('returns a disposable that unregisters the handler (then -32601)', async () => {
      const registration = agent.onRequest('m', () => 'ok');
      expect(await outcome(client.sendRequest('m'))).to.equal('ok:"ok"');
      registration.dispose();
      expect(await outcome(client.sendRequest('m'))).to.equal('-32601');
    });

    it('does nothing when disposed again after the method was registered anew', async () => {
      const registration = agent.onRequest('m', () => 'first');
      registration.dispose();
      agent.onRequest('m', () => 'second');
      registration.dispose();
      expect(await outcome(client.sendRequest('m'))).to.equal('ok:"second"');
    });

    it('replaces the handler when the method is registered again', async () => {
      agent.onRequest('m', () => 'first');
      agent.onRequest('m', () => 'second');
      expect(await outcome(client.sendRequest('m'))).to.equal('ok:"second"');
    });

    it('leaves the replacing handler in place when the replaced registration is disposed', async () => {
      const replaced = agent.onRequest('m', () => 'first');
      agent.onRequest('m', () => 'second');
      replaced.dispose();
      expect(await outcome(client.sendRequest('m'))).to.equal('ok:"second"');
    });

    it('unregisters at the end of a `using` block', async () => {
      {
        using _registration = agent.onRequest('m', () => 'inside');
        expect(await outcome(client.sendRequest('m'))).to.equal('ok:"inside"');
      }
      expect(await outcome(client.sendRequest('m'))).to.equal('-32601');
    });

    it('keeps method names off the object prototype (`constructor` is unknown)', async () => {
      expect(await outcome(client.sendRequest('constructor'))).to.equal('-32601');
    });

    it('throws TypeError when the handler is not a function', () => {
      expect(() => agent.onRequest('m', 'nope' as unknown as () => void)).to.throw(TypeError, /handler/);
    });

    it('throws TypeError when the method is not a string', () => {
      expect(() => agent.onRequest(1 as unknown as string, () => 1)).to.throw(TypeError, /method/);
    });
  });

  describe('#onNotification()', () => {
    it('passes the params and the whole message to the handler', async () => {
      const seen: [unknown, NotificationMessage][] = [];
      agent.onNotification('note', (params, message) => void seen.push([params, message]));
      await notify('note', { a: 1 });
      expect(seen).to.deep.equal([[{ a: 1 }, { jsonrpc: '2.0', method: 'note', params: { a: 1 } }]]);
    });

    it('returns a disposable that unregisters the handler', async () => {
      const seen: string[] = [];
      const registration = agent.onNotification('note', () => void seen.push('note'));
      await notify('note');
      registration.dispose();
      await notify('note');
      expect(seen).to.deep.equal(['note']);
    });

    it('replaces the handler when the method is registered again', async () => {
      const seen: string[] = [];
      agent.onNotification('note', () => void seen.push('first'));
      agent.onNotification('note', () => void seen.push('second'));
      await notify('note');
      expect(seen).to.deep.equal(['second']);
    });

    it('unregisters at the end of a `using` block', async () => {
      const seen: string[] = [];
      {
        using _registration = agent.onNotification('note', () => void seen.push('note'));
        await notify('note');
      }
      await notify('note');
      expect(seen).to.deep.equal(['note']);
    });
  });

  describe('#onAnyRequest()', () => {
    it('handles every request that no method handler claims, with the method on the responder', async () => {
      agent.onAnyRequest((params, responder) => ({ method: responder.method, params }));
      expect(await client.sendRequest('x/y', [1])).to.deep.equal({ method: 'x/y', params: [1] });
    });

    it('lets a method handler win over the fallback', async () => {
      agent.onAnyRequest(() => 'fallback');
      agent.onRequest('m', () => 'method');
      expect([await client.sendRequest('m'), await client.sendRequest('other')]).to.deep.equal(['method', 'fallback']);
    });

    it('returns a disposable after which unknown methods get -32601 again', async () => {
      const registration = agent.onAnyRequest(() => 'fallback');
      registration.dispose();
      expect(await outcome(client.sendRequest('other'))).to.equal('-32601');
    });

    it('replaces the fallback when registered again; disposing the replaced one changes nothing', async () => {
      const replaced = agent.onAnyRequest(() => 'first');
      agent.onAnyRequest(() => 'second');
      replaced.dispose();
      expect(await client.sendRequest('other')).to.equal('second');
    });
  });

  describe('#onAnyNotification()', () => {
    it('handles every notification that no method handler claims, with the method on the message', async () => {
      const seen: string[] = [];
      agent.onAnyNotification((_params, message) => void seen.push(message.method));
      agent.onNotification('claimed', () => void seen.push('claimed by its handler'));
      await notify('a/b');
      await notify('claimed');
      await notify('$/cancel_request', { requestId: 77 });
      expect(seen).to.deep.equal(['a/b', 'claimed by its handler', '$/cancel_request']);
    });

    it('returns a disposable after which unclaimed notifications are ignored again', async () => {
      const seen: string[] = [];
      const registration = agent.onAnyNotification((_params, message) => void seen.push(message.method));
      registration.dispose();
      await notify('a/b');
      expect(seen).to.deep.equal([]);
    });
  });
});
