/**
 * SentRequest and PreparedRequest API edges: detach() and awaiting, the id of a request
 * that was never sent, typed errors for a second send() and impossible forwards.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import {
  AlreadyAnsweredError,
  Connection,
  ForwardingError,
  RequestAlreadySentError,
  RequestDetachedError,
  createConnectionPair,
  type Responder,
} from '../lib';

/** Settles `promise` into its rejection reason (or the string 'resolved'). */
function outcomeOf(promise: PromiseLike<unknown>): Promise<unknown> {
  return Promise.resolve(promise).then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('SentRequest (API edges)', () => {
  let client: Connection;
  let agent: Connection;
  const held: Responder[] = [];
  beforeEach(() => {
    [client, agent] = createConnectionPair();
    held.length = 0;
    agent.onRequest('hold', (_params, responder) => void held.push(responder));
    // Either side answers 'echo': a round trip in one direction is a barrier for what was sent before.
    for (const connection of [client, agent]) connection.onRequest('echo', (params) => params);
  });
  afterEach(async () => {
    await Promise.all([client.close(), agent.close()]);
  });

  describe('#then() while the request is pending (no promise of its own)', () => {
    it('runs its callback after the code that routed the answer has returned, never inside it', async () => {
      const input = new PassThrough();
      const output = new PassThrough().resume();
      const connection = new Connection(input, output);
      try {
        const order: string[] = [];
        const sent = connection.sendRequest('m');
        const done = sent.then((value) => order.push(`callback ${String(value)}`));
        // A first line and a macrotask: from then on the input emits each write at once, so the
        // answer below is routed (and its request settled) inside write().
        input.write('\n');
        await new Promise((resolve) => setImmediate(resolve));
        input.write('{"jsonrpc":"2.0","id":1,"result":"answer"}\n');
        order.push('write() returned');
        await done;
        expect(order).to.deep.equal(['write() returned', 'callback answer']);
        expect(sent.isSettled).to.equal(true);
      } finally {
        await connection.close();
      }
    });

    it('completes several then() calls in the order they were made, each with the answer', async () => {
      const order: string[] = [];
      const sent = client.sendRequest('hold');
      const first = sent.then((value) => order.push(`first ${String(value)}`));
      const second = sent.then((value) => order.push(`second ${String(value)}`));
      await client.sendRequest('echo', []);
      held[0]!.respond(7);
      await Promise.all([first, second]);
      expect(order).to.deep.equal(['first 7', 'second 7']);
    });

    it('passes the answer through a callback that is not a function, adopts a returned promise, and rejects with a thrown error', async () => {
      const sent = client.sendRequest('hold');
      const passedThrough = sent.then(null);
      const adopted = sent.then((value) => Promise.resolve(`adopted ${String(value)}`));
      const failure = new Error('callback failed');
      const thrown = sent.then(() => {
        throw failure;
      });
      await client.sendRequest('echo', []);
      held[0]!.respond('x');
      expect(await passedThrough).to.equal('x');
      expect(await adopted).to.equal('adopted x');
      expect(await outcomeOf(thrown)).to.equal(failure);
    });

    it('passes an error answer through to the next rejection handler when given none', async () => {
      const sent = client.sendRequest('hold');
      const chained = sent.then((value) => value).catch((error: unknown) => (error as { code: number }).code);
      await client.sendRequest('echo', []);
      held[0]!.respondWithError({ code: -32042, message: 'no' });
      expect(await chained).to.equal(-32042);
    });
  });

  describe('#detach()', () => {
    it('makes a later await reject at once with RequestDetachedError naming the method', async () => {
      const sent = client.sendRequest('hold');
      sent.detach();
      const error = await outcomeOf(sent);
      expect(error).to.be.instanceOf(RequestDetachedError).and.include({ code: 'ACP_WIRE_REQUEST_DETACHED', method: 'hold' });
      expect(client.pendingCount, 'the request still waits for its answer on the wire').to.equal(1);
    });

    it('makes an await that started before detach() reject at once, before any answer', async () => {
      const sent = client.sendRequest('hold');
      const waiting = outcomeOf(sent);
      sent.detach();
      expect(await waiting).to.be.instanceOf(RequestDetachedError);
      expect(held).to.have.length(1);
      expect(held[0]!.hasResponded).to.equal(false);
    });

    it('discards an answer that already arrived: awaiting then rejects with RequestDetachedError', async () => {
      const sent = client.sendRequest('echo', ['kept?']);
      expect(await sent).to.deep.equal(['kept?']);
      sent.detach();
      expect(await outcomeOf(sent)).to.be.instanceOf(RequestDetachedError);
    });
  });

  describe('given up after its timeout', () => {
    it('is settled at once and no longer pending; its late answer passes without a warning', async () => {
      const warnings: unknown[] = [];
      client.on('warning', (warning) => warnings.push(warning));
      const sent = client.sendRequest('hold', undefined, { timeout: 1, timeoutGrace: 1 });
      expect(await outcomeOf(sent)).to.have.property('code', 'ACP_WIRE_REQUEST_TIMEOUT');
      expect(sent.isSettled).to.equal(true);
      expect(client.pendingCount).to.equal(0);
      held[0]!.respond('too late');
      await client.sendRequest('echo', []);
      await agent.sendRequest('echo', []);
      expect(warnings).to.deep.equal([]);
    });
  });

  describe('#id', () => {
    it('is undefined for a request whose signal was already aborted (nothing was sent)', async () => {
      const sent = client.sendRequest('hold', undefined, { signal: AbortSignal.abort() });
      expect(sent.id).to.equal(undefined);
      await outcomeOf(sent);
    });

    it('is undefined for a request sent on a closed connection', async () => {
      await client.close();
      const sent = client.sendRequest('hold');
      expect(sent.id).to.equal(undefined);
      await outcomeOf(sent);
    });
  });

  describe('#forwardResponseTo()', () => {
    it('throws ForwardingError when the answer is already forwarded, leaving the second responder unanswered', async () => {
      const upstream: Responder[] = [];
      client.onRequest('up', (_params, responder) => void upstream.push(responder));
      const [up1, up2] = [agent.sendRequest('up'), agent.sendRequest('up')];
      const downstream = client.sendRequest('hold');
      await Promise.all([agent.sendRequest('echo', []), client.sendRequest('echo', [])]);
      downstream.forwardResponseTo(upstream[0] as Responder<never>);
      expect(() => downstream.forwardResponseTo(upstream[1] as Responder<never>))
        .to.throw(ForwardingError, /already forwarded/)
        .with.property('code', 'ACP_WIRE_FORWARDING');
      expect(upstream[1]!.hasResponded).to.equal(false);
      upstream[1]!.respond('second');
      held[0]!.respond('first');
      expect([await up1, await up2]).to.deep.equal(['first', 'second']);
    });

    it('throws ForwardingError when the request was detached and its answer discarded', async () => {
      const downstream = client.sendRequest('echo', [1]);
      downstream.detach();
      await client.sendRequest('echo', []);
      expect(downstream.isSettled).to.equal(true);
      const upstream: Responder[] = [];
      client.onRequest('up', (_params, responder) => void upstream.push(responder));
      const up = agent.sendRequest('up');
      await agent.sendRequest('echo', []);
      expect(() => downstream.forwardResponseTo(upstream[0] as Responder<never>)).to.throw(ForwardingError, /discarded/);
      expect(upstream[0]!.hasResponded).to.equal(false);
      upstream[0]!.respond('mine');
      expect(await up).to.equal('mine');
    });

    it('still throws AlreadyAnsweredError for an answered responder', async () => {
      const downstream = client.sendRequest('echo', [1]);
      const upstream: Responder[] = [];
      client.onRequest('up', (_params, responder) => {
        responder.respond('answered');
        upstream.push(responder);
      });
      expect(await agent.sendRequest('up')).to.equal('answered');
      expect(() => downstream.forwardResponseTo(upstream[0] as Responder<never>)).to.throw(AlreadyAnsweredError);
      await downstream;
    });
  });
});

describe('PreparedRequest (API edges)', () => {
  let client: Connection;
  let agent: Connection;
  beforeEach(() => {
    [client, agent] = createConnectionPair();
    agent.onRequest('echo', (params) => params);
  });
  afterEach(async () => {
    await Promise.all([client.close(), agent.close()]);
  });

  it('throws RequestAlreadySentError on a second send(), and sends nothing more', async () => {
    const prepared = client.prepareRequest('echo', [1]);
    expect(await prepared.send()).to.deep.equal([1]);
    expect(() => prepared.send())
      .to.throw(RequestAlreadySentError)
      .with.property('code', 'ACP_WIRE_REQUEST_ALREADY_SENT');
    expect(client.pendingCount).to.equal(0);
  });

  it('throws RequestAlreadySentError on a second send() after the first one found its signal aborted', async () => {
    const prepared = client.prepareRequest('echo', [1], { signal: AbortSignal.abort() });
    await outcomeOf(prepared.send());
    expect(() => prepared.send()).to.throw(RequestAlreadySentError);
  });
});
