/**
 * InitializeGate (lib/acp/initialize.ts): the agent-side ACP `initialize` rule of docs/wire.md, in
 * memory over a Connection driven by raw lines (exact error objects).
 */
import { expect } from 'chai';
import { InitializeGate, RpcError, type Responder } from '../../lib';
import { deferred } from '../helpers/async';
import { collectGarbage } from '../helpers/events';
import type { WireMessage } from '../helpers/messages';
import { RawPeer } from '../helpers/peers';

const RESULT = { protocolVersion: 2, capabilities: {} };

describe('InitializeGate', () => {
  let peer: RawPeer;
  let gate: InitializeGate;
  let nextId: number;
  let dispatched: { promise: Promise<void>; resolve: () => void };
  /** Sends a request and resolves with its response. */
  const call = (method: string, params: object = {}): Promise<WireMessage> => {
    const id = nextId++;
    peer.send({ jsonrpc: '2.0', id, method, params });
    return peer.out.response(id);
  };
  /** Sends `initialize` with the given test behaviour. */
  const initialize = (test?: string): Promise<WireMessage> => call('initialize', { test });

  beforeEach(() => {
    peer = new RawPeer();
    gate = new InitializeGate(peer.connection);
    nextId = 1;
    dispatched = deferred();
    peer.connection.onRequest('initialize', (params: { test?: string }, responder) => {
      if (params.test === 'error') return void responder.respondWithError(RpcError.internalError('refused on request'));
      if (params.test === 'throw') throw new RpcError(-32002, 'handler failed');
      if (params.test === 'drop') return void dispatched.resolve();
      return RESULT;
    });
    peer.connection.onRequest('session/new', () => ({ sessionId: 's1' }));
  });
  afterEach(async () => {
    await peer.close();
  });

  describe('a failed first initialize', () => {
    for (const failure of ['error', 'throw'] as const) {
      it(`returns to uninitialized after ${failure === 'error' ? 'an error answer' : 'a handler error'}, and a retry succeeds`, async () => {
        expect((await initialize(failure)).error).to.be.an('object');
        expect(gate.state).to.equal('uninitialized');
        expect((await initialize()).result).to.deep.equal(RESULT);
        expect(gate.state).to.equal('ready');
      });
    }

    it('returns to uninitialized after a dropped responder (automatic -32603), and a retry succeeds', async () => {
      const answer = initialize('drop');
      await dispatched.promise;
      expect(gate.state).to.equal('initializing');
      await collectGarbage();
      expect((await answer).error).to.deep.equal({
        code: -32603,
        message: 'Internal error',
        data: 'request handler dropped its responder for `initialize`',
      });
      expect(gate.state).to.equal('uninitialized');
      expect((await initialize()).result).to.deep.equal(RESULT);
    });

    it('returns to uninitialized when no initialize handler is registered (-32601)', async () => {
      const bare = new RawPeer();
      const bareGate = new InitializeGate(bare.connection);
      bare.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      expect((await bare.out.response(1)).error).to.deep.include({ code: -32601 });
      expect(bareGate.state).to.equal('uninitialized');
      await bare.close();
    });
  });

  describe('a repeated initialize', () => {
    it('is refused -32600 with a string data while ready, and the connection stays ready', async () => {
      await initialize();
      const repeat = await initialize();
      expect(repeat.error).to.deep.include({ code: -32600, message: 'Invalid Request' });
      expect((repeat.error as { data: unknown }).data).to.be.a('string');
      expect(gate.state).to.equal('ready');
      expect((await call('session/new')).result).to.deep.equal({ sessionId: 's1' });
    });

    it('is refused -32600 while the first one is still in progress, which then completes normally', async () => {
      const slow = deferred<Responder>();
      peer.connection.onRequest('initialize', (_params, responder) => void slow.resolve(responder));
      const first = initialize();
      const responder = await slow.promise;
      const second = await initialize();
      expect(second.error).to.deep.include({ code: -32600 });
      expect((second.error as { data: unknown }).data).to.be.a('string');
      responder.respond(RESULT);
      expect((await first).result).to.deep.equal(RESULT);
      expect(gate.state).to.equal('ready');
    });
  });

  describe('other requests before ready', () => {
    for (const method of ['session/new', 'no/such/method']) {
      it(`refuses \`${method}\` with -32600 and data naming the method`, async () => {
        const answer = await call(method);
        expect(answer.error).to.deep.include({ code: -32600, message: 'Invalid Request' });
        expect((answer.error as { data: unknown }).data)
          .to.be.a('string')
          .that.includes(method);
      });
    }

    it('refuses them while initializing too', async () => {
      const slow = deferred<Responder>();
      peer.connection.onRequest('initialize', (_params, responder) => void slow.resolve(responder));
      void initialize();
      const responder = await slow.promise;
      expect((await call('session/new')).error).to.deep.include({ code: -32600 });
      responder.respond(RESULT);
    });
  });

  describe('notifications', () => {
    it('accepts $/cancel_request while initializing: the initialize is cancelled, fails -32800, and a retry succeeds', async () => {
      const slow = deferred<Responder>();
      peer.connection.onRequest('initialize', (params: { test?: string }, responder) => {
        if (params.test === 'slow') return void slow.resolve(responder);
        return RESULT;
      });
      const answer = initialize('slow');
      const responder = await slow.promise;
      const aborted = new Promise((resolve) => responder.signal.addEventListener('abort', resolve, { once: true }));
      peer.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      await aborted;
      expect(responder.isCancelled).to.equal(true);
      responder.respondCancelled();
      expect((await answer).error).to.deep.equal({ code: -32800, message: 'Request cancelled' });
      expect(gate.state).to.equal('uninitialized');
      expect((await initialize()).result).to.deep.equal(RESULT);
    });

    it('delivers other notifications before initialize as usual', async () => {
      const seen = deferred<unknown>();
      peer.connection.onNotification('session/cancel', (params) => seen.resolve(params));
      peer.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'x' } });
      expect(await seen.promise).to.deep.equal({ sessionId: 'x' });
      expect(gate.state).to.equal('uninitialized');
    });
  });

  describe('#state', () => {
    it('moves from uninitialized to initializing to ready', async () => {
      const slow = deferred<Responder>();
      peer.connection.onRequest('initialize', (_params, responder) => void slow.resolve(responder));
      const states = [gate.state];
      const answer = initialize();
      const responder = await slow.promise;
      states.push(gate.state);
      responder.respond(RESULT);
      await answer;
      states.push(gate.state);
      expect(states).to.deep.equal(['uninitialized', 'initializing', 'ready']);
    });
  });

  describe('options', () => {
    it('gates on the methods given, and always refuses the `refuse` methods with -32600', async () => {
      const proxy = new RawPeer();
      const proxyGate = new InitializeGate(proxy.connection, { methods: ['proxy/initialize'], refuse: ['initialize'] });
      proxy.connection.onRequest('proxy/initialize', () => RESULT);
      proxy.connection.onRequest('initialize', () => RESULT);
      proxy.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      proxy.send({ jsonrpc: '2.0', id: 2, method: 'proxy/initialize', params: {} });
      expect((await proxy.out.response(1)).error).to.deep.include({ code: -32600 });
      expect((await proxy.out.response(2)).result).to.deep.equal(RESULT);
      expect(proxyGate.state).to.equal('ready');
      proxy.send({ jsonrpc: '2.0', id: 3, method: 'initialize', params: {} });
      expect((await proxy.out.response(3)).error).to.deep.include({ code: -32600 });
      await proxy.close();
    });

    it('throws TypeError when methods is empty', async () => {
      expect(() => new InitializeGate(peer.connection, { methods: [] })).to.throw(TypeError);
    });
  });
});
