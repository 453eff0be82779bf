/**
 * request-cancellation.txt, section "Unanswered Requests", and the responder tracker:
 * one spec per sentence. Wire rules run against the wire agent over child-process stdio; the rest
 * runs in memory with exact lines. GC cases create their target inside a helper function, then
 * `collectGarbage()`; every "nothing is sent" case carries a positive control that is answered.
 */
import { expect } from 'chai';
import { createConnectionPair, RpcError, type Connection, type Responder } from '../../lib';
import { deferred, rejectionOf } from '../helpers/async';
import { startWireAgent } from '../helpers/cancellation';
import { collectGarbage } from '../helpers/events';
import { CANCELLED_ERROR, isResponse, sameId, type WireMessage } from '../helpers/messages';
import { RawPeer } from '../helpers/peers';
import { useBuild } from '../helpers/processes';

const dropped = (method: string): string =>
  `{"code":-32603,"message":"Internal error","data":"request handler dropped its responder for \`${method}\`"}`;

function write(peer: RawPeer, id: string | number, method: string, params?: object): void {
  peer.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
}

/** Waits until every line written before it has been processed and its consequences written. */
async function barrier(peer: RawPeer, id: string): Promise<void> {
  write(peer, id, '$/no-such-method');
  await peer.out.response(id);
}

function responsesTo(peer: RawPeer, id: unknown): WireMessage[] {
  return peer.out.messages.filter((m) => isResponse(m) && sameId(m.id, id));
}

/** A handler that lets go of its responder at once: the positive control of every GC case. */
function registerDrop(peer: RawPeer): void {
  peer.connection.onRequest('drop', () => undefined);
}

describe('Request cancellation: Unanswered Requests', () => {
  describe('over child-process stdio (the wire agent)', () => {
    useBuild();
    let agent: Awaited<ReturnType<typeof startWireAgent>> | undefined;
    afterEach(async () => {
      if (agent) expect(await agent.close()).to.equal(0);
      agent = undefined;
    });
    it('always answers a received request, even when the handler never responds (no forced collection)', async () => {
      agent = await startWireAgent();
      const answer = await agent.call('_test/drop');
      expect(agent.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${answer.id}","error":${dropped('_test/drop')}}`);
    });

    it('answers -32800 (Request cancelled) for a dropped responder whose request the peer had cancelled', async () => {
      agent = await startWireAgent();
      const id = agent.nextId();
      agent.send({ jsonrpc: '2.0', id, method: '_test/drop', params: { afterMs: 50 } });
      agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
      const answer = await agent.received.response(id);
      expect(agent.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${id}","error":${CANCELLED_ERROR}}`);
    });

    it('answers -32603 (Internal error) with data naming the method otherwise', async () => {
      agent = await startWireAgent();
      const id = agent.nextId();
      agent.send({ jsonrpc: '2.0', id, method: '_test/drop' });
      await agent.call('_test/gc');
      const answer = await agent.received.response(id);
      expect(agent.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${id}","error":${dropped('_test/drop')}}`);
    });

    it('fails a first initialize whose responder was dropped, leaving the connection uninitialized so the client can retry', async () => {
      agent = await startWireAgent({ initialize: false });
      const failed = await agent.call('initialize', { protocolVersion: 2, _meta: { test: 'drop' } });
      expect(failed.error).to.deep.include({ code: -32603, message: 'Internal error' });
      expect((await agent.call('_test/echo', { x: 1 })).error).to.deep.include({ code: -32600 });
      expect((await agent.call('initialize', { protocolVersion: 2 })).result).to.deep.include({ protocolVersion: 2 });
      // A failed repeat keeps the previous initialization.
      expect((await agent.call('initialize', { protocolVersion: 2, _meta: { test: 'drop' } })).error).to.deep.include({ code: -32600 });
      expect((await agent.call('_test/echo', { x: 2 })).result).to.deep.equal({ x: 2 });
    });
  });

  describe('in memory', () => {
    let peer: RawPeer;
    beforeEach(() => {
      peer = new RawPeer();
      registerDrop(peer);
    });
    afterEach(async () => {
      await peer.close();
    });

    it('answers a responder dropped and collected in the very turn its handler returned', async () => {
      const gc = (globalThis as { gc?: () => void }).gc!;
      write(peer, 'now', 'drop');
      // The handler has returned; its responder is unreachable: collect before the turn ends.
      gc();
      await collectGarbage();
      const answer = await peer.out.response('now');
      expect(peer.out.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"now","error":${dropped('drop')}}`);
    });

    it('answers with the error the handler that dropped the responder throws or rejects with, instead of the automatic one', async () => {
      peer.connection.onRequest('throws', () => {
        throw new RpcError(-32001, 'mine', { why: 'handler' });
      });
      peer.connection.onRequest('rejects', async () => {
        await Promise.resolve();
        throw new Error('plain failure');
      });
      write(peer, 1, 'throws');
      write(peer, 2, 'rejects');
      await peer.out.response(2);
      await collectGarbage();
      await barrier(peer, 'b');
      expect(responsesTo(peer, 1).map((m) => peer.out.lineOf(m))).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"mine","data":{"why":"handler"}}}',
      ]);
      const [rejected, ...more] = responsesTo(peer, 2);
      expect(more).to.have.length(0);
      expect(rejected!.error).to.deep.include({ code: -32603, message: 'Internal error' });
      expect((rejected!.error as { data: unknown }).data)
        .to.be.a('string')
        .that.includes('plain failure');
    });

    it('sends no automatic response after a response was already sent', async () => {
      peer.connection.onRequest('answered', (_params, responder) => {
        responder.respond('done');
        return undefined;
      });
      write(peer, 1, 'answered');
      write(peer, 2, 'drop');
      await collectGarbage();
      await peer.out.response(2);
      await barrier(peer, 'b');
      expect(responsesTo(peer, 1).map((m) => peer.out.lineOf(m))).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":"done"}']);
    });

    it('sends no automatic response after the response was handed off with forwardResponseTo()', async () => {
      const [toBackend, backend] = createConnectionPair();
      const backendHeld: Responder[] = [];
      backend.onRequest('slow', (_params, responder) => void backendHeld.push(responder));
      peer.connection.onRequest('forward', (params, responder) => {
        toBackend.sendRequest('slow', params).forwardResponseTo(responder);
      });
      write(peer, 1, 'forward', { n: 1 });
      write(peer, 2, 'drop');
      await collectGarbage();
      await peer.out.response(2);
      await barrier(peer, 'b');
      expect(responsesTo(peer, 1)).to.have.length(0);
      backendHeld[0]!.respond({ from: 'backend' });
      const answer = await peer.out.response(1);
      expect(peer.out.lineOf(answer)).to.equal('{"jsonrpc":"2.0","id":1,"result":{"from":"backend"}}');
      await Promise.all([toBackend.close(), backend.close()]);
    });

    for (const holder of ['a timer', 'a queue', 'another object'] as const) {
      it(`sends no automatic response while ${holder} still owns the responder`, async () => {
        const release = holdResponder(peer, holder);
        write(peer, 1, 'held');
        write(peer, 2, 'drop');
        await collectGarbage();
        await peer.out.response(2);
        await barrier(peer, 'b');
        expect(responsesTo(peer, 1)).to.have.length(0);
        release();
        const answer = await peer.out.response(1);
        expect(peer.out.lineOf(answer)).to.equal('{"jsonrpc":"2.0","id":1,"result":"released"}');
      });
    }

    it('sends no automatic response for a responder dropped while the connection is shutting down', async () => {
      const closing = new RawPeer({ endOutputOnClose: false });
      let releaseInClose: (() => void) | undefined;
      closing.connection.onRequest('held', (_params, responder) => {
        releaseInClose = () => responder[Symbol.dispose]();
      });
      closing.send({ jsonrpc: '2.0', id: 1, method: 'held' });
      closing.send({ jsonrpc: '2.0', id: 'b', method: 'nothing' });
      await closing.out.response('b');
      let wasClosing = false;
      closing.connection.once('close', () => {
        wasClosing = closing.connection.isClosed;
        releaseInClose!();
      });
      await closing.close();
      expect(wasClosing).to.equal(true);
      expect(closing.out.lines).to.have.length(1);
    });

    it('sends no automatic response for a responder collected after the connection has terminated', async () => {
      const closed = new RawPeer({ endOutputOnClose: false });
      registerDrop(closed);
      const owner: { responder?: Responder } = {};
      closed.connection.onRequest('held', (_params, responder) => void (owner.responder = responder));
      // The control: a drop while open is answered.
      closed.send({ jsonrpc: '2.0', id: 'control', method: 'drop' });
      await collectGarbage();
      await closed.out.response('control');
      closed.send({ jsonrpc: '2.0', id: 1, method: 'held' });
      closed.send({ jsonrpc: '2.0', id: 'b', method: 'nothing' });
      await closed.out.response('b');
      await closed.close();
      delete owner.responder;
      await collectGarbage();
      await collectGarbage();
      expect(closed.out.lines).to.have.length(2);
    });

    it('never replies to a notification, whether unhandled, handled, or its handler throws', async () => {
      peer.connection.onNotification('handled', () => 'a value that is not sent');
      peer.connection.onNotification('throws', () => {
        throw new Error('notification handler failure');
      });
      const errors: unknown[] = [];
      peer.connection.on('warning', (error) => errors.push(error));
      for (const method of ['unhandled', 'handled', 'throws']) peer.send({ jsonrpc: '2.0', method, params: {} });
      await collectGarbage();
      await barrier(peer, 'b');
      expect(peer.out.lines).to.have.length(1);
      expect(errors).to.have.length(1);
    });

    it('sends the automatic error as an ordinary error response: the requester rejects with RpcError -32603', async () => {
      const [client, agent] = createConnectionPair();
      const dispatched = deferred();
      agent.onRequest('lost', () => void dispatched.resolve());
      const answer = awaitAnswer(client, 'lost');
      await dispatched.promise;
      await collectGarbage();
      const error = await answer;
      expect(error).to.be.instanceOf(RpcError);
      expect((error as RpcError).toJSON()).to.deep.equal(JSON.parse(dropped('lost')));
      await Promise.all([client.close(), agent.close()]);
    });

    it('treats responder[Symbol.dispose]() as "dropped now": the automatic answer goes out without a collection', async () => {
      peer.connection.onRequest('disposed', (_params, responder) => void responder[Symbol.dispose]());
      write(peer, 1, 'disposed');
      const answer = await peer.out.response(1);
      expect(peer.out.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":1,"error":${dropped('disposed')}}`);
    });

    it('treats leaving a `using` block as "dropped now", answering -32800 when the peer had cancelled', async () => {
      const cancelled: Responder[] = [];
      peer.connection.onRequest('scoped', (_params, responder) => void cancelled.push(responder));
      write(peer, 1, 'scoped');
      peer.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      await barrier(peer, 'b');
      {
        using scoped = cancelled.pop()!;
        expect(scoped.isCancelled).to.equal(true);
      }
      const answer = await peer.out.response(1);
      expect(peer.out.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":1,"error":${CANCELLED_ERROR}}`);
    });

    it('lets the error of a handler that leaves a `using` block by throwing win over the automatic answer', async () => {
      peer.connection.onRequest('usingThrows', (_params, responder) => {
        using scoped = responder;
        void scoped;
        throw new RpcError(-32002, 'sync failure');
      });
      peer.connection.onRequest('usingRejects', async (_params, responder) => {
        await Promise.resolve();
        using scoped = responder;
        void scoped;
        throw new RpcError(-32003, 'async failure');
      });
      write(peer, 1, 'usingThrows');
      write(peer, 2, 'usingRejects');
      await peer.out.response(2);
      await barrier(peer, 'b');
      expect([...responsesTo(peer, 1), ...responsesTo(peer, 2)].map((m) => peer.out.lineOf(m))).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"sync failure"}}',
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"async failure"}}',
      ]);
    });

    it('lets the value a handler returns from inside a `using` block be the answer', async () => {
      peer.connection.onRequest('usingReturns', async (_params, responder) => {
        using scoped = responder;
        void scoped;
        await Promise.resolve();
        return { from: 'handler' };
      });
      write(peer, 1, 'usingReturns');
      await peer.out.response(1);
      await barrier(peer, 'b');
      expect(responsesTo(peer, 1).map((m) => peer.out.lineOf(m))).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":{"from":"handler"}}']);
    });

    it('answers a responder disposed while its async handler still runs once the handler returns', async () => {
      const disposed = deferred();
      const release = deferred();
      peer.connection.onRequest('later', async (_params, responder) => {
        responder[Symbol.dispose]();
        disposed.resolve();
        await release.promise;
      });
      write(peer, 1, 'later');
      await disposed.promise;
      await barrier(peer, 'b');
      expect(responsesTo(peer, 1)).to.have.length(0);
      release.resolve();
      const answer = await peer.out.response(1);
      expect(peer.out.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":1,"error":${dropped('later')}}`);
    });

    it('does nothing on responder[Symbol.dispose]() after an answer', async () => {
      peer.connection.onRequest('twice', (_params, responder) => {
        responder.respond(1);
        responder[Symbol.dispose]();
      });
      write(peer, 1, 'twice');
      await barrier(peer, 'b');
      expect(responsesTo(peer, 1).map((m) => peer.out.lineOf(m))).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":1}']);
    });
  });
});

/** Sends a request and returns the promise of its rejection (the SentRequest itself is not kept). */
function awaitAnswer(client: Connection, method: string): Promise<unknown> {
  return rejectionOf(client.sendRequest(method));
}

/**
 * Registers `held`, whose handler gives its responder to `holder` and nothing else; returns the
 * function that makes the holder answer `"released"`.
 */
function holdResponder(peer: RawPeer, holder: 'a timer' | 'a queue' | 'another object'): () => void {
  const queue: Responder[] = [];
  const owners = new Map<string, { responder: Responder }>();
  const flag = { released: false };
  peer.connection.onRequest('held', (_params, responder) => {
    if (holder === 'a queue') queue.push(responder);
    else if (holder === 'another object') owners.set('owner', { responder });
    else {
      // Only the interval's callback references the responder.
      const interval = setInterval(() => {
        if (responder.signal.aborted) return clearInterval(interval);
        if (!flag.released) return;
        clearInterval(interval);
        responder.respond('released');
      }, 1);
    }
  });
  return () => {
    if (holder === 'a queue') queue.shift()!.respond('released');
    else if (holder === 'another object') owners.get('owner')!.responder.respond('released');
    else flag.released = true;
  };
}
