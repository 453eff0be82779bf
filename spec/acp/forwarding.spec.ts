import { expect } from 'chai';
import {
  AlreadyAnsweredError,
  LEGACY_PROXY_SUCCESSOR_METHOD,
  PROXY_SUCCESSOR_METHOD,
  RpcError,
  isCancelNotification,
  sendProxiedMessageTo,
  successorTarget,
  type Responder,
} from '../../lib';
import { twoHops, type TwoHops } from '../helpers/chain';
import { collectGarbage } from '../helpers/events';
import { hasMethod, isResponseTo } from '../helpers/messages';

const CANCEL = '$/cancel_request';

/** The agent answers `slow` only when cancelled: `-32800`, or `{partial:true}` with `partial`. */
function serveSlow(hops: TwoHops): void {
  hops.agent.onRequest('slow', (params: { partial?: boolean } | undefined, responder: Responder) => {
    responder.signal.addEventListener('abort', () => {
      if (params?.partial) responder.respond({ partial: true });
      else responder.respondCancelled();
    });
  });
}

/** The `$/cancel_request` lines the proxy sent to the agent, once a later `marker` request has gone through. */
async function cancelsSeenByAgent(hops: TwoHops): Promise<string[]> {
  hops.agent.onRequest('marker', () => 'ok');
  await hops.proxyDown.sendRequest('marker');
  return hops.down.fromLeft.matching(hasMethod(CANCEL));
}

/** Sends a request the proxy answers itself, so the next client id differs from the next downstream id. */
async function skewIds(hops: TwoHops): Promise<void> {
  hops.proxyUp.onRequest('local', () => 'here');
  await hops.client.sendRequest('local');
}

describe('SentRequest', () => {
  let hops: TwoHops;
  beforeEach(() => {
    hops = twoHops();
    serveSlow(hops);
  });
  afterEach(() => hops.close());

  describe('#forwardResponseTo()', () => {
    beforeEach(() => {
      hops.proxyUp.onAnyRequest((params, responder) => {
        hops.proxyDown.sendRequest(responder.method, params).forwardResponseTo(responder);
      });
    });

    it('makes the downstream result the upstream answer', async () => {
      hops.agent.onRequest('echo', (params) => params);
      expect(await hops.client.sendRequest('echo', { a: [1, 'x'] })).to.deep.equal({ a: [1, 'x'] });
    });

    it('makes the downstream error object the upstream answer, data included', async () => {
      hops.agent.onRequest('fail', () => {
        throw new RpcError(-32001, 'Nope', { why: ['x'] });
      });
      const sent = hops.client.sendRequest('fail');
      await sent.then(undefined, () => undefined);
      expect(await hops.up.fromRight.take(isResponseTo(sent.id as number))).to.equal(
        `{"jsonrpc":"2.0","id":${String(sent.id)},"error":{"code":-32001,"message":"Nope","data":{"why":["x"]}}}`,
      );
    });

    it('hands the upstream responder off: dropping it sends no automatic answer', async () => {
      let held: Responder | undefined;
      hops.agent.onRequest('held', (_params, responder: Responder) => void (held = responder));
      const sent = hops.client.sendRequest('held');
      await hops.down.fromLeft.take(hasMethod('held'));
      await collectGarbage();
      held!.respond('late');
      expect(await sent).to.equal('late');
      expect(hops.up.fromRight.matching(isResponseTo(sent.id as number))).to.have.length(1);
    });

    it('re-issues an upstream cancel downstream exactly once, with the downstream id', async () => {
      await skewIds(hops);
      const sent = hops.client.sendRequest('slow');
      const forwarded = JSON.parse(await hops.down.fromLeft.take(hasMethod('slow'))) as { id: number };
      expect(forwarded.id).to.not.equal(sent.id);
      hops.client.sendNotification(CANCEL, { requestId: sent.id });
      hops.client.sendNotification(CANCEL, { requestId: sent.id });
      expect(await sent.then(undefined, (e: unknown) => e)).to.include({ code: -32800 });
      expect(await cancelsSeenByAgent(hops)).to.deep.equal([
        `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${forwarded.id}}}`,
      ]);
    });

    it('passes the downstream answer to a cancel (data) back upstream', async () => {
      const sent = hops.client.sendRequest('slow', { partial: true });
      await hops.down.fromLeft.take(hasMethod('slow'));
      sent.cancel();
      expect(await sent).to.deep.equal({ partial: true });
    });

    it('does not forward a cancel that arrives after the downstream answer', async () => {
      hops.agent.onRequest('echo', (params) => params);
      const sent = hops.client.sendRequest('echo', [1]);
      await sent;
      hops.client.sendNotification(CANCEL, { requestId: sent.id });
      expect(await cancelsSeenByAgent(hops)).to.deep.equal([]);
    });

    it('answers upstream -32603 incoming_transport_closed naming the method when the downstream connection closes first', async () => {
      const sent = hops.client.sendRequest('slow');
      await hops.down.fromLeft.take(hasMethod('slow'));
      void hops.agent.close();
      await sent.then(undefined, () => undefined);
      expect(await hops.up.fromRight.take(isResponseTo(sent.id as number))).to.equal(
        `{"jsonrpc":"2.0","id":${String(sent.id)},"error":{"code":-32603,"message":"Internal error","data":{"reason":"incoming_transport_closed","method":"slow"}}}`,
      );
    });

    it("names the upstream request's method in incoming_transport_closed when the hop renames the request", async () => {
      hops.agent.onRequest('proxy/initialize', (_params, responder: Responder) => void hops.agent.once('close', () => responder));
      hops.proxyUp.onRequest('initialize', (params, responder: Responder) => {
        hops.proxyDown.sendRequest('proxy/initialize', params).forwardResponseTo(responder);
      });
      const sent = hops.client.sendRequest('initialize', {});
      await hops.down.fromLeft.take(hasMethod('proxy/initialize'));
      void hops.agent.close();
      const error = await sent.then(undefined, (e: unknown) => e);
      expect(error)
        .to.be.instanceOf(RpcError)
        .and.deep.include({
          code: -32603,
          data: { reason: 'incoming_transport_closed', method: 'initialize' },
        });
    });

    it('answers upstream at once when the downstream request already failed (connection closed before sending)', async () => {
      await hops.proxyDown.close();
      const error = await hops.client.sendRequest('slow').then(undefined, (e: unknown) => e);
      expect(error)
        .to.be.instanceOf(RpcError)
        .and.deep.include({
          code: -32603,
          data: { reason: 'incoming_transport_closed', method: 'slow' },
        });
    });
  });

  describe('#forwardResponseTo() edge cases', () => {
    it('still settles the request for a caller that also awaits it', async () => {
      hops.agent.onRequest('echo', (params) => params);
      let awaited: Promise<unknown> | undefined;
      hops.proxyUp.onRequest('echo', (params, responder: Responder) => {
        const downstream = hops.proxyDown.sendRequest('echo', params);
        downstream.forwardResponseTo(responder);
        awaited = Promise.resolve(downstream);
      });
      expect(await hops.client.sendRequest('echo', [2])).to.deep.equal([2]);
      expect(await awaited).to.deep.equal([2]);
    });

    it('answers upstream -32800 when an already-aborted signal stopped the request before it was sent', async () => {
      hops.proxyUp.onRequest('never', (params, responder: Responder) => {
        hops.proxyDown.sendRequest('never', params, { signal: AbortSignal.abort() }).forwardResponseTo(responder);
      });
      const error = await hops.client.sendRequest('never').then(undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(RpcError).and.deep.include({ code: -32800, data: undefined });
    });

    it('answers upstream request_timeout when the request was given up after its timeout before being forwarded', async () => {
      hops.agent.onRequest('ignore', (_params, responder: Responder) => void hops.agent.once('close', () => responder));
      const downstream = hops.proxyDown.sendRequest('ignore', undefined, { timeout: 1, timeoutGrace: 1 });
      await downstream.then(undefined, () => undefined);
      hops.proxyUp.onRequest('late', (_params, responder: Responder) => downstream.forwardResponseTo(responder));
      const error = await hops.client.sendRequest('late').then(undefined, (e: unknown) => e);
      expect(error)
        .to.be.instanceOf(RpcError)
        .and.deep.include({ code: -32603, data: { reason: 'request_timeout', method: 'late' } });
    });

    it('throws instead of handing the responder off when the request was detached and its answer discarded', async () => {
      hops.agent.onRequest('echo', (params) => params);
      const downstream = hops.proxyDown.sendRequest('echo', [3]);
      downstream.detach();
      await hops.down.fromRight.take(isResponseTo(downstream.id as number));
      await hops.proxyDown.sendRequest('echo', []);
      hops.proxyUp.onRequest('late', (_params, responder: Responder) => downstream.forwardResponseTo(responder));
      const error = await hops.client.sendRequest('late').then(undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(RpcError).and.include({ code: -32603 });
      expect((error as RpcError).data).to.match(/detached/);
    });

    it('throws when the answer is already forwarded to another responder', async () => {
      const answers: unknown[] = [];
      hops.agent.onRequest('echo', (params) => params);
      hops.proxyUp.onRequest('twice', (_params, responder: Responder) => {
        const downstream = hops.proxyDown.sendRequest('echo', ['once']);
        downstream.forwardResponseTo(responder);
        hops.proxyUp.onRequest('second', (_p, other: Responder) => downstream.forwardResponseTo(other));
      });
      answers.push(await hops.client.sendRequest('twice'));
      answers.push(await hops.client.sendRequest('second').then(undefined, (e: unknown) => (e as RpcError).code));
      expect(answers).to.deep.equal([['once'], -32603]);
    });
  });

  describe('#forwardResponseTo() on an answered responder', () => {
    it('throws AlreadyAnsweredError and sends nothing downstream', async () => {
      let thrown: unknown;
      hops.proxyUp.onRequest('twice', (_params, responder: Responder) => {
        responder.respond('mine');
        const downstream = hops.proxyDown.sendRequest('slow');
        try {
          downstream.forwardResponseTo(responder);
        } catch (error) {
          thrown = error;
        }
        downstream.detach();
      });
      expect(await hops.client.sendRequest('twice')).to.equal('mine');
      expect(thrown).to.be.instanceOf(AlreadyAnsweredError);
    });
  });

  describe('#forwardCancellationFrom()', () => {
    it('cancels downstream once when the upstream responder is cancelled, and leaves the answer to the caller', async () => {
      hops.proxyUp.onRequest('slow', async (params, responder: Responder) => {
        const downstream = hops.proxyDown.sendRequest('slow', params);
        downstream.forwardCancellationFrom(responder);
        return { wrapped: await downstream };
      });
      const sent = hops.client.sendRequest('slow', { partial: true });
      await hops.down.fromLeft.take(hasMethod('slow'));
      sent.cancel();
      expect(await sent).to.deep.equal({ wrapped: { partial: true } });
      expect(await cancelsSeenByAgent(hops)).to.have.length(1);
    });

    it('cancels when an AbortSignal aborts', async () => {
      const controller = new AbortController();
      const downstream = hops.proxyDown.sendRequest('slow');
      downstream.forwardCancellationFrom(controller.signal);
      await hops.down.fromLeft.take(hasMethod('slow'));
      controller.abort();
      expect(await downstream.then(undefined, (e: unknown) => e)).to.include({ code: -32800 });
      expect(await cancelsSeenByAgent(hops)).to.have.length(1);
    });

    it('cancels at once when the AbortSignal has already aborted', async () => {
      const downstream = hops.proxyDown.sendRequest('slow');
      downstream.forwardCancellationFrom(AbortSignal.abort());
      expect(await downstream.then(undefined, (e: unknown) => e)).to.include({ code: -32800 });
    });

    it('stops listening once its disposable is disposed', async () => {
      const controller = new AbortController();
      const downstream = hops.proxyDown.sendRequest('slow');
      downstream.forwardCancellationFrom(controller.signal).dispose();
      controller.abort();
      expect(await cancelsSeenByAgent(hops)).to.deep.equal([]);
      downstream.cancel();
      await downstream.then(undefined, () => undefined);
    });
  });

  describe('a custom forwarder using neither', () => {
    it('absorbs the cancellation: the downstream request is not cancelled', async () => {
      let upstreamCancelled: Promise<boolean> | undefined;
      let downstreamDone: Promise<unknown> | undefined;
      hops.proxyUp.onRequest('slow', (params, responder: Responder) => {
        upstreamCancelled = new Promise((resolve) => responder.signal.addEventListener('abort', () => resolve(responder.isCancelled)));
        downstreamDone = hops.proxyDown.sendRequest('slow', params).then(undefined, () => undefined);
        return upstreamCancelled.then(() => 'absorbed');
      });
      const sent = hops.client.sendRequest('slow');
      await hops.down.fromLeft.take(hasMethod('slow'));
      sent.cancel();
      expect(await sent).to.equal('absorbed');
      expect(await upstreamCancelled).to.equal(true);
      expect(await cancelsSeenByAgent(hops)).to.deep.equal([]);
      await hops.proxyDown.close();
      await downstreamDone;
    });
  });
});

describe('sendProxiedMessageTo()', () => {
  let hops: TwoHops;
  beforeEach(() => {
    hops = twoHops();
    hops.proxyUp.onAnyRequest((params, responder) => sendProxiedMessageTo(hops.proxyDown, params, responder));
    hops.proxyUp.onAnyNotification((params, message) => sendProxiedMessageTo(hops.proxyDown, params, message));
  });
  afterEach(() => hops.close());

  it('sends a request on with a new id allocated by the next connection', async () => {
    hops.agent.onRequest('echo', (params) => params);
    hops.up.injectToRight('{"jsonrpc":"2.0","id":"up-1","method":"echo","params":{"x":1}}');
    expect(await hops.down.fromLeft.take(hasMethod('echo'))).to.equal('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":1}}');
    expect(await hops.up.fromRight.take(isResponseTo('up-1'))).to.equal('{"jsonrpc":"2.0","id":"up-1","result":{"x":1}}');
  });

  it('passes a notification on unchanged', async () => {
    hops.client.sendNotification('session/update', { sessionId: 's', update: { n: [1, 2] } });
    expect(await hops.down.fromLeft.take()).to.equal(
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"n":[1,2]}}}',
    );
  });

  const rawCancels: [string, string, unknown][] = [
    ['plain', CANCEL, { requestId: 1 }],
    ['wrapped once', PROXY_SUCCESSOR_METHOD, { method: CANCEL, params: { requestId: 1 } }],
    [
      'wrapped twice, legacy name inside',
      PROXY_SUCCESSOR_METHOD,
      { method: LEGACY_PROXY_SUCCESSOR_METHOD, params: { method: CANCEL, params: { requestId: 1 } } },
    ],
    ['wrapped in an envelope with an odd _meta', LEGACY_PROXY_SUCCESSOR_METHOD, { method: CANCEL, params: { requestId: 1 }, _meta: 3 }],
    ['with malformed params', CANCEL, { requestId: {} }],
  ];
  for (const [what, method, params] of rawCancels) {
    it(`drops a raw $/cancel_request ${what} instead of tunnelling it`, async () => {
      hops.client.sendNotification(method, params);
      hops.client.sendNotification('marker');
      expect(await hops.down.fromLeft.take()).to.equal('{"jsonrpc":"2.0","method":"marker"}');
    });
  }

  it('forwards the content of an envelope under the method given', async () => {
    hops.proxyUp.onRequest(PROXY_SUCCESSOR_METHOD, (params: { method: string; params: unknown }, responder) =>
      sendProxiedMessageTo(hops.proxyDown, params.params, responder, params.method),
    );
    hops.agent.onRequest('inner', (params) => ({ got: params }));
    expect(await hops.client.sendRequest(PROXY_SUCCESSOR_METHOD, { method: 'inner', params: [7] })).to.deep.equal({ got: [7] });
  });

  it('wraps what it sends in an envelope when the peer is a successor target', async () => {
    const successor = successorTarget(hops.proxyDown);
    hops.proxyUp.onRequest('up', (params, responder) => sendProxiedMessageTo(successor, params, responder));
    hops.agent.onRequest(PROXY_SUCCESSOR_METHOD, (params) => params);
    expect(await hops.client.sendRequest('up', { a: 1 })).to.deep.equal({ method: 'up', params: { a: 1 } });
  });

  it('drops a notification to a closed peer without throwing', async () => {
    await hops.proxyDown.close();
    const errors: unknown[] = [];
    hops.proxyUp.on('warning', (error) => errors.push(error));
    hops.client.sendNotification('late');
    hops.proxyUp.onRequest('after', () => 'ok');
    expect(await hops.client.sendRequest('after')).to.equal('ok');
    expect(errors).to.deep.equal([]);
  });

  it('answers a request to a closed peer -32603 incoming_transport_closed', async () => {
    await hops.proxyDown.close();
    const error = await hops.client.sendRequest('late').then(undefined, (e: unknown) => e);
    expect(error)
      .to.be.instanceOf(RpcError)
      .and.deep.include({
        code: -32603,
        data: { reason: 'incoming_transport_closed', method: 'late' },
      });
  });
});

describe('isCancelNotification()', () => {
  it('is true for a plain or wrapped cancel and false for other methods', () => {
    expect(isCancelNotification(CANCEL, {})).to.equal(true);
    expect(isCancelNotification(PROXY_SUCCESSOR_METHOD, { method: CANCEL })).to.equal(true);
    expect(isCancelNotification(PROXY_SUCCESSOR_METHOD, { method: 'session/cancel' })).to.equal(false);
    expect(isCancelNotification(PROXY_SUCCESSOR_METHOD, 'x')).to.equal(false);
  });
});
