import { expect } from 'chai';
import {
  LEGACY_PROXY_SUCCESSOR_METHOD,
  PROXY_SUCCESSOR_METHOD,
  innermostMessage,
  successorTarget,
  unwrapSuccessor,
  wrapSuccessor,
  type Responder,
} from '../../lib';
import { hasMethod, isResponseTo } from '../helpers/messages';
import { tappedPair, type TappedPair } from '../helpers/peers';

describe('successor envelope', () => {
  describe('wrapSuccessor()', () => {
    it('puts the inner method and params side by side', () => {
      expect(wrapSuccessor('session/new', { cwd: '/' })).to.deep.equal({ method: 'session/new', params: { cwd: '/' } });
    });

    it('omits params when the inner message has none', () => {
      expect(JSON.stringify(wrapSuccessor('ping'))).to.equal('{"method":"ping"}');
    });

    it('adds _meta beside the inner fields', () => {
      expect(wrapSuccessor('ping', [1], { trace: 'x' })).to.deep.equal({ method: 'ping', params: [1], _meta: { trace: 'x' } });
    });
  });

  describe('unwrapSuccessor()', () => {
    it('returns the envelope of well-formed params', () => {
      const params = { method: 'a', params: { b: 1 }, _meta: { c: 2 } };
      expect(unwrapSuccessor(params)).to.deep.equal(params);
    });

    it('accepts an envelope without inner params', () => {
      expect(unwrapSuccessor({ method: 'a' })).to.deep.equal({ method: 'a' });
    });

    const malformed: [string, unknown][] = [
      ['missing params', undefined],
      ['array params', ['a']],
      ['no method', { params: {} }],
      ['a method that is not a string', { method: 5 }],
      ['inner params that are a string', { method: 'a', params: 'x' }],
      ['inner params that are null', { method: 'a', params: null }],
      ['a _meta that is not an object', { method: 'a', _meta: [1] }],
    ];
    for (const [what, params] of malformed) {
      it(`returns undefined for ${what}`, () => {
        expect(unwrapSuccessor(params)).to.equal(undefined);
      });
    }
  });

  describe('innermostMessage()', () => {
    it('unwraps any number of envelopes, new and legacy names mixed', () => {
      const params = { method: LEGACY_PROXY_SUCCESSOR_METHOD, params: { method: 'x', params: [1] } };
      expect(innermostMessage(PROXY_SUCCESSOR_METHOD, params)).to.deep.equal({ method: 'x', params: [1] });
    });

    it('stops at a malformed envelope and returns it as is', () => {
      const bad = { method: 7 };
      expect(innermostMessage(PROXY_SUCCESSOR_METHOD, { method: PROXY_SUCCESSOR_METHOD, params: bad })).to.deep.equal({
        method: PROXY_SUCCESSOR_METHOD,
        params: bad,
      });
    });

    it('returns a message that is not an envelope unchanged', () => {
      expect(innermostMessage('ping', { a: 1 })).to.deep.equal({ method: 'ping', params: { a: 1 } });
    });
  });

  describe('successorTarget()', () => {
    let pair: TappedPair;
    beforeEach(() => {
      pair = tappedPair();
    });
    afterEach(() => pair.close());

    it('sends a request as a proxy/successor request with the inner message as params', async () => {
      pair.right.onRequest(PROXY_SUCCESSOR_METHOD, () => 'ok');
      expect(await successorTarget(pair.left).sendRequest('session/new', { cwd: '/' })).to.equal('ok');
      expect(await pair.fromLeft.take()).to.equal(
        '{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/"}}}',
      );
    });

    it('sends a notification as a proxy/successor notification', async () => {
      successorTarget(pair.left).sendNotification('session/cancel', { sessionId: 's' });
      expect(await pair.fromLeft.take()).to.equal(
        '{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}',
      );
    });

    it('cancels an enveloped request with a plain $/cancel_request naming the envelope request id', async () => {
      pair.right.onRequest(PROXY_SUCCESSOR_METHOD, (_params, responder: Responder) => {
        responder.signal.addEventListener('abort', () => responder.respondCancelled());
      });
      const sent = successorTarget(pair.left).sendRequest('slow');
      await pair.fromLeft.take(hasMethod(PROXY_SUCCESSOR_METHOD));
      sent.cancel();
      expect(await pair.fromLeft.take(hasMethod('$/cancel_request'))).to.equal(
        `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${String(sent.id)}}}`,
      );
      const error = await sent.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.include({ code: -32800 });
    });
  });

  describe('on receipt', () => {
    let pair: TappedPair;
    beforeEach(() => {
      pair = tappedPair();
    });
    afterEach(() => pair.close());

    for (const envelope of [PROXY_SUCCESSOR_METHOD, LEGACY_PROXY_SUCCESSOR_METHOD]) {
      it(`honours a $/cancel_request wrapped in ${envelope} like a plain one`, async () => {
        pair.right.onRequest('slow', (_params, responder: Responder) => {
          responder.signal.addEventListener('abort', () => responder.respondCancelled());
        });
        const sent = pair.left.sendRequest('slow');
        await pair.fromLeft.take(hasMethod('slow'));
        pair.left.sendNotification(envelope, { method: '$/cancel_request', params: { requestId: sent.id } });
        expect(await pair.fromRight.take(isResponseTo(sent.id as number))).to.equal(
          `{"jsonrpc":"2.0","id":${String(sent.id)},"error":{"code":-32800,"message":"Request cancelled"}}`,
        );
        await sent.then(undefined, () => undefined);
      });
    }

    it('delivers a malformed envelope to the proxy/successor handler unchanged', async () => {
      const seen = new Promise<unknown>((resolve) => pair.right.onNotification(PROXY_SUCCESSOR_METHOD, (params) => resolve(params)));
      pair.left.sendNotification(PROXY_SUCCESSOR_METHOD, { method: 42, params: 'x' });
      expect(await seen).to.deep.equal({ method: 42, params: 'x' });
    });
  });
});
