import { expect } from 'chai';
import {
  CANCEL_REQUEST_METHOD,
  LEGACY_PROXY_INITIALIZE_METHOD,
  LEGACY_PROXY_SUCCESSOR_METHOD,
  PROXY_INITIALIZE_METHOD,
  PROXY_SUCCESSOR_METHOD,
  ProxyComponent,
  RpcError,
  type Connection,
  type RequestCancellationHandle,
  type RequestId,
  type Responder,
} from '../../lib';
import { hasMethod, isResponseTo } from '../helpers/messages';
import { tappedPair, type TappedPair } from '../helpers/peers';

/** What the successor (behind the test's conductor connection) does with each unwrapped request. */
type Successor = Record<string, (params: any, responder: Responder) => unknown>;

/** The conductor side: answers `proxy/successor` requests as the successor would. */
function serveSuccessor(conductor: Connection, successor: Successor): void {
  conductor.onRequest(PROXY_SUCCESSOR_METHOD, (envelope: { method: string; params?: unknown }, responder: Responder) => {
    const handler = successor[envelope.method];
    if (!handler) throw RpcError.methodNotFound(envelope.method);
    return handler(envelope.params, responder);
  });
}

/** A successor `work` that answers only when cancelled: `-32800`, or `{partial:true}` when asked. */
const slowWork: Successor['work'] = (params: { partial?: boolean } | undefined, responder) => {
  responder.signal.addEventListener('abort', () => (params?.partial ? responder.respond({ partial: true }) : responder.respondCancelled()));
};

/** Plain `$/cancel_request` lines the proxy sent, once a later `marker` round trip has gone through. */
async function cancelsFromProxy(pair: TappedPair, conductor: Connection): Promise<string[]> {
  await conductor.sendRequest('marker');
  return pair.fromRight.matching(hasMethod(CANCEL_REQUEST_METHOD));
}

/** Initializes the proxy and takes the lines of that exchange out of the tap. */
async function initialize(pair: TappedPair): Promise<void> {
  await pair.left.sendRequest(PROXY_INITIALIZE_METHOD, {});
  await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD));
  await pair.fromRight.take(isResponseTo(1));
}

describe('ProxyComponent', () => {
  let pair: TappedPair;
  let conductor: Connection;
  let proxy: ProxyComponent;
  beforeEach(() => {
    pair = tappedPair();
    conductor = pair.left;
    proxy = new ProxyComponent(pair.right);
    serveSuccessor(conductor, { initialize: () => ({ protocolVersion: 2 }), marker: () => 'ok', work: slowWork });
  });
  afterEach(() => pair.close());

  describe('before proxy/initialize', () => {
    it('refuses a plain initialize with -32600', async () => {
      pair.injectToRight('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
      expect(await pair.fromRight.take(isResponseTo(1))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request","data":"`initialize` is not accepted on this connection"}}',
      );
    });

    it('refuses any other request with -32600 naming it', async () => {
      const error = await conductor.sendRequest('session/new').then(undefined, (e: unknown) => e);
      expect(error).to.deep.include({ code: -32600, data: '`session/new` needs a completed initialize first' });
    });

    it('forwards proxy/initialize to the successor as initialize inside proxy/successor', async () => {
      expect(await conductor.sendRequest(PROXY_INITIALIZE_METHOD, { protocolVersion: 2 })).to.deep.equal({ protocolVersion: 2 });
      expect(await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD))).to.equal(
        '{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":2}}}',
      );
      expect(proxy.initializeState).to.equal('ready');
    });

    it('accepts the legacy _proxy/initialize', async () => {
      expect(await conductor.sendRequest(LEGACY_PROXY_INITIALIZE_METHOD, {})).to.deep.equal({ protocolVersion: 2 });
      expect(proxy.initializeState).to.equal('ready');
    });

    it('stays uninitialized when the successor refuses initialize', async () => {
      serveSuccessor(conductor, {});
      await conductor.sendRequest(PROXY_INITIALIZE_METHOD, {}).then(undefined, () => undefined);
      expect(proxy.initializeState).to.equal('uninitialized');
    });
  });

  describe('#onInitialize()', () => {
    it('replaces the forwarding of proxy/initialize until disposed', async () => {
      const registration = proxy.onInitialize(() => ({ mine: true }));
      expect(await conductor.sendRequest(PROXY_INITIALIZE_METHOD, {})).to.deep.equal({ mine: true });
      registration.dispose();
      const second = tappedPair();
      const other = new ProxyComponent(second.right);
      serveSuccessor(second.left, { initialize: () => 'forwarded' });
      other.onInitialize(() => 'local').dispose();
      expect(await second.left.sendRequest(PROXY_INITIALIZE_METHOD, {})).to.equal('forwarded');
      await second.close();
    });
  });

  describe('once initialized', () => {
    beforeEach(() => initialize(pair));

    it('forwards an unhandled client request to the successor inside proxy/successor with a new id', async () => {
      serveSuccessor(conductor, { echo: (params) => params });
      pair.injectToRight('{"jsonrpc":"2.0","id":"c-1","method":"echo","params":[1]}');
      expect(await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD))).to.equal(
        '{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"echo","params":[1]}}',
      );
      expect(await pair.fromRight.take(isResponseTo('c-1'))).to.equal('{"jsonrpc":"2.0","id":"c-1","result":[1]}');
    });

    it('forwards an unhandled client notification to the successor inside proxy/successor', async () => {
      conductor.sendNotification('session/cancel', { sessionId: 's' });
      expect(await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD))).to.equal(
        '{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}',
      );
    });

    for (const envelope of [PROXY_SUCCESSOR_METHOD, LEGACY_PROXY_SUCCESSOR_METHOD]) {
      it(`unwraps a successor request in ${envelope} and forwards it to the client direction plain`, async () => {
        conductor.onRequest('fs/read', (params) => ({ read: params }));
        expect(await conductor.sendRequest(envelope, { method: 'fs/read', params: { path: '/x' } })).to.deep.equal({
          read: { path: '/x' },
        });
        expect(await pair.fromRight.take(hasMethod('fs/read'))).to.equal(
          '{"jsonrpc":"2.0","id":2,"method":"fs/read","params":{"path":"/x"}}',
        );
      });
    }

    it('unwraps a successor notification and forwards it plain', async () => {
      conductor.sendNotification(PROXY_SUCCESSOR_METHOD, { method: 'session/update', params: { u: 1 } });
      expect(await pair.fromRight.take(hasMethod('session/update'))).to.equal(
        '{"jsonrpc":"2.0","method":"session/update","params":{"u":1}}',
      );
    });

    it('answers a malformed envelope request -32602 when no handler claims it', async () => {
      const error = await conductor.sendRequest(PROXY_SUCCESSOR_METHOD, { method: 3 }).then(undefined, (e: unknown) => e);
      expect(error).to.deep.include({ code: -32602, message: 'Invalid params', data: 'malformed `proxy/successor` envelope' });
    });

    it('delivers a malformed envelope to the successor-side handler for its method unchanged', async () => {
      proxy.onSuccessorRequest(PROXY_SUCCESSOR_METHOD, (params, _responder, method) => ({ params, method }));
      expect(await conductor.sendRequest(PROXY_SUCCESSOR_METHOD, { method: 3, params: 'x' })).to.deep.equal({
        params: { method: 3, params: 'x' },
        method: PROXY_SUCCESSOR_METHOD,
      });
    });

    it('ignores a malformed envelope notification', async () => {
      conductor.sendNotification(PROXY_SUCCESSOR_METHOD, { params: {} });
      conductor.sendNotification(PROXY_SUCCESSOR_METHOD, { method: 'marker' });
      expect(await pair.fromRight.take()).to.equal('{"jsonrpc":"2.0","method":"marker"}');
    });

    it('never forwards a raw $/cancel_request from either side', async () => {
      conductor.sendNotification(CANCEL_REQUEST_METHOD, { requestId: 99 });
      conductor.sendNotification(PROXY_SUCCESSOR_METHOD, { method: CANCEL_REQUEST_METHOD, params: { requestId: 98 } });
      conductor.sendNotification('after');
      expect(await pair.fromRight.take()).to.equal('{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"after"}}');
    });

    it('lets a client-side handler claim a method (#onClientRequest)', async () => {
      proxy.onClientRequest('echo', () => 'from proxy');
      expect(await conductor.sendRequest('echo')).to.equal('from proxy');
    });

    it('lets a successor-side handler claim an unwrapped method, with the inner method as third argument (#onSuccessorRequest)', async () => {
      proxy.onSuccessorRequest('fs/read', (params, responder, method) => ({ params, method, envelope: responder.method }));
      expect(await conductor.sendRequest(PROXY_SUCCESSOR_METHOD, { method: 'fs/read', params: [1] })).to.deep.equal({
        params: [1],
        method: 'fs/read',
        envelope: PROXY_SUCCESSOR_METHOD,
      });
    });

    it('lets a successor-side notification handler claim an unwrapped notification (#onSuccessorNotification)', async () => {
      const seen = new Promise<unknown>((resolve) =>
        proxy.onSuccessorNotification('session/update', (_params, message) => resolve(message)),
      );
      conductor.sendNotification(PROXY_SUCCESSOR_METHOD, { method: 'session/update', params: { u: 2 } });
      expect(await seen).to.deep.equal({ jsonrpc: '2.0', method: 'session/update', params: { u: 2 } });
    });
  });

  describe('decision matrix: a proxy that intercepts `work`, when the client cancels it', () => {
    beforeEach(() => initialize(pair));

    it('handles it locally: answers -32800 itself and sends nothing to the successor', async () => {
      proxy.onClientRequest('work', (_params, responder: Responder) => {
        responder.signal.addEventListener('abort', () => responder.respondCancelled());
      });
      const sent = conductor.sendRequest('work');
      await pair.fromLeft.take(hasMethod('work'));
      sent.cancel();
      expect(await sent.then(undefined, (e: unknown) => e)).to.include({ code: -32800 });
      expect(await cancelsFromProxy(pair, conductor)).to.deep.equal([]);
      expect(pair.fromRight.matching((_, line) => line.includes('"method":"work"'))).to.deep.equal([]);
    });

    it('propagates it with forwardResponseTo: one plain cancel naming the envelope id; the successor answer flows back', async () => {
      proxy.onClientRequest('work', (params: object, responder: Responder) => {
        proxy.successor.sendRequest('work', { ...params, partial: true }).forwardResponseTo(responder);
      });
      const sent = conductor.sendRequest('work', {});
      const envelope = JSON.parse(await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD))) as { id: RequestId };
      sent.cancel();
      expect(await sent).to.deep.equal({ partial: true });
      expect(await cancelsFromProxy(pair, conductor)).to.deep.equal([
        `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(envelope.id)}}}`,
      ]);
    });

    it('propagates it with forwardCancellationFrom and its own answer', async () => {
      proxy.onClientRequest('work', async (_params, responder: Responder) => {
        const downstream = proxy.successor.sendRequest('work', { partial: true });
        downstream.forwardCancellationFrom(responder);
        return { via: 'proxy', answer: await downstream };
      });
      const sent = conductor.sendRequest('work');
      await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD));
      sent.cancel();
      expect(await sent).to.deep.equal({ via: 'proxy', answer: { partial: true } });
      expect(await cancelsFromProxy(pair, conductor)).to.have.length(1);
    });

    it('absorbs it: the successor sees no cancel and the client gets the full answer', async () => {
      let finish!: (value: string) => void;
      serveSuccessor(conductor, { marker: () => 'ok', work: () => new Promise<string>((resolve) => (finish = resolve)) });
      proxy.onClientRequest('work', async (_params, responder: Responder) => {
        const answer = proxy.successor.sendRequest('work');
        responder.signal.addEventListener('abort', () => finish('done anyway'));
        return answer;
      });
      const sent = conductor.sendRequest('work');
      await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD));
      sent.cancel();
      expect(await sent).to.equal('done anyway');
      expect(await cancelsFromProxy(pair, conductor)).to.deep.equal([]);
    });

    it('claims the raw notification and routes it itself, after the connection marked the request cancelled', async () => {
      const handles = new Map<RequestId, { handle: RequestCancellationHandle; responder: Responder }>();
      const markedFirst: boolean[] = [];
      proxy.onClientRequest('work', (_params, responder: Responder) => {
        const downstream = proxy.successor.sendRequest('work');
        handles.set(responder.id, { handle: downstream.cancellationHandle(), responder });
        downstream.then(
          (result) => responder.respond(result),
          (error: unknown) => responder.respondWithError(error as RpcError),
        );
      });
      proxy.onClientNotification(CANCEL_REQUEST_METHOD, (params: { requestId: RequestId }) => {
        const entry = handles.get(params.requestId);
        if (!entry) return;
        markedFirst.push(entry.responder.isCancelled);
        entry.handle.cancel();
      });
      const sent = conductor.sendRequest('work');
      await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD));
      sent.cancel();
      expect(await sent.then(undefined, (e: unknown) => e)).to.include({ code: -32800 });
      expect(markedFirst).to.deep.equal([true]);
      expect(await cancelsFromProxy(pair, conductor)).to.have.length(1);
    });

    it('works the same for a successor request: forwardResponseTo the client direction re-issues the cancel once, plain', async () => {
      conductor.onRequest('fs/read', slowWork);
      proxy.onSuccessorRequest('fs/read', (params: object, responder: Responder) => {
        proxy.client.sendRequest('fs/read', { ...params, partial: true }).forwardResponseTo(responder);
      });
      const sent = conductor.sendRequest(PROXY_SUCCESSOR_METHOD, { method: 'fs/read', params: {} });
      const forwarded = JSON.parse(await pair.fromRight.take(hasMethod('fs/read'))) as { id: RequestId };
      sent.cancel();
      expect(await sent).to.deep.equal({ partial: true });
      expect(await cancelsFromProxy(pair, conductor)).to.deep.equal([
        `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(forwarded.id)}}}`,
      ]);
    });

    it('falls back to generic forwarding: the raw cancel is not tunnelled, the envelope request is cancelled once', async () => {
      const sent = conductor.sendRequest('work');
      const envelope = JSON.parse(await pair.fromRight.take(hasMethod(PROXY_SUCCESSOR_METHOD))) as { id: RequestId };
      sent.cancel();
      sent.cancel();
      expect(await sent.then(undefined, (e: unknown) => e)).to.include({ code: -32800 });
      expect(await cancelsFromProxy(pair, conductor)).to.deep.equal([
        `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(envelope.id)}}}`,
      ]);
      expect(
        pair.fromRight.matching((_, line) => line.includes('"method":"proxy/successor","params":{"method":"$/cancel_request"')),
      ).to.deep.equal([]);
    });
  });
});
