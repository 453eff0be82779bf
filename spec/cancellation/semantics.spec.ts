/**
 * request-cancellation.txt, section "Semantics": one spec per sentence, over the wire (the wire
 * agent on child-process stdio, or an in-process server on a real TCP socket), asserting exact lines.
 */
import { expect } from 'chai';
import type { Responder } from '../../lib';
import { deferred } from '../helpers/async';
import { captureLogger, serveOverTcp, startWireAgent, type WireEndpoint } from '../helpers/cancellation';
import { CANCELLED_ERROR, isResponse, sameId, type WireMessage } from '../helpers/messages';
import { RawPeer } from '../helpers/peers';
import { useBuild } from '../helpers/processes';

type WireAgent = Awaited<ReturnType<typeof startWireAgent>>;

/** Sends a request with a fresh id (no wait) and returns the id. */
function request(endpoint: WireEndpoint, method: string, params?: object): string {
  const id = endpoint.nextId();
  endpoint.send({ jsonrpc: '2.0', id, method, params });
  return id;
}

function cancel(endpoint: WireEndpoint, requestId: unknown): void {
  endpoint.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId } });
}

/** Every response line for `id` so far. */
function responsesTo(endpoint: WireEndpoint, id: string): WireMessage[] {
  return endpoint.received.messages.filter((m) => isResponse(m) && sameId(m.id, id));
}

describe('Request cancellation: Semantics', () => {
  describe('over child-process stdio (the wire agent)', () => {
    useBuild();
    let agent: WireAgent;
    before(async () => {
      agent = await startWireAgent();
    });
    after(async () => {
      expect(await agent.close()).to.equal(0);
    });

    it('lets the peer ignore $/cancel_request and respond to the request normally', async () => {
      const id = request(agent, '_test/sleep', { ms: 300, onCancel: 'ignore' });
      cancel(agent, id);
      const seen = await agent.call('_test/received');
      const answer = await agent.received.response(id);
      // The cancel reached the agent while the request was still running…
      expect(JSON.stringify(seen.result)).to.include(`{"method":"$/cancel_request","params":{"requestId":"${id}"}}`);
      expect(agent.received.messages.indexOf(seen)).to.be.below(agent.received.messages.indexOf(answer));
      // …and the answer is the normal one.
      expect(agent.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${id}","result":{"slept":300}}`);
    });

    it('lets the peer finish early with whatever data it has', async () => {
      const id = request(agent, '_test/sleep', { ms: 600_000, onCancel: 'partial' });
      cancel(agent, id);
      const answer = await agent.received.response(id);
      expect(agent.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${id}","result":{"partial":true}}`);
    });

    it('lets the peer respond with the standard cancellation error -32800 "Request cancelled"', async () => {
      const id = request(agent, '_test/sleep', { ms: 600_000, onCancel: 'error' });
      cancel(agent, id);
      const answer = await agent.received.response(id);
      expect(agent.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${id}","error":${CANCELLED_ERROR}}`);
    });

    it('always gives the requesting side exactly one response; cancellation only changes which one', async () => {
      const ignored = request(agent, '_test/sleep', { ms: 200, onCancel: 'ignore' });
      const partial = request(agent, '_test/sleep', { ms: 600_000, onCancel: 'partial' });
      const errored = request(agent, '_test/sleep', { ms: 600_000, onCancel: 'error' });
      const dropped = request(agent, '_test/drop', { afterMs: 50 });
      const uncancelled = request(agent, '_test/sleep', { ms: 10 });
      for (const id of [ignored, partial, errored, dropped]) cancel(agent, id);
      const answers = await Promise.all([ignored, partial, errored, dropped, uncancelled].map((id) => agent.received.response(id)));
      expect(answers.map((a) => a.result ?? a.error)).to.deep.equal([
        { slept: 200 },
        { partial: true },
        { code: -32800, message: 'Request cancelled' },
        { code: -32800, message: 'Request cancelled' },
        { slept: 10 },
      ]);
      await agent.call('_test/echo', { barrier: true });
      for (const id of [ignored, partial, errored, dropped, uncancelled]) expect(responsesTo(agent, id)).to.have.length(1);
    });

    it('silently ignores a $/cancel_request for an unknown or already-completed request id', async () => {
      const done = await agent.call('_test/echo', { n: 1 });
      const before = agent.received.lines.length;
      cancel(agent, done.id);
      cancel(agent, 'no-such-request');
      cancel(agent, 987654);
      cancel(agent, null);
      const barrier = await agent.call('_test/echo', { barrier: 'unknown-ids' });
      expect(agent.received.lines.slice(before)).to.deep.equal([agent.received.lineOf(barrier)]);
      expect(responsesTo(agent, done.id as string)).to.have.length(1);
    });

    it('ignores a $/cancel_request with malformed params without a reply (and keeps the request running)', async () => {
      const id = request(agent, '_test/sleep', { ms: 600_000, onCancel: 'error' });
      const before = agent.received.lines.length;
      for (const params of [{ requestId: { id } }, { requestId: [id] }, { requestId: true }, {}, [id]]) {
        agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params });
      }
      agent.send('{"jsonrpc":"2.0","method":"$/cancel_request"}');
      const barrier = await agent.call('_test/echo', { barrier: 'malformed' });
      expect(agent.received.lines.slice(before)).to.deep.equal([agent.received.lineOf(barrier)]);
      cancel(agent, id);
      expect((await agent.received.response(id)).error).to.deep.equal({ code: -32800, message: 'Request cancelled' });
    });
  });

  describe('over TCP (an in-process server)', () => {
    let client: WireEndpoint | undefined;
    afterEach(async () => {
      await client?.close();
      client = undefined;
    });

    it('is cooperative: a $/cancel_request answers nothing by itself; the handler decides the response', async () => {
      const sawCancel = deferred<Responder>();
      client = await serveOverTcp((connection) => {
        connection.onRequest('work', (_params, responder) => {
          responder.signal.addEventListener('abort', () => sawCancel.resolve(responder), { once: true });
        });
        connection.onRequest('echo', (params) => params);
      });
      const id = request(client, 'work');
      cancel(client, id);
      const responder = await sawCancel.promise;
      await client.call('echo', { barrier: true });
      expect(responsesTo(client, id)).to.have.length(0);
      responder.respond({ finished: 'anyway' });
      const answer = await client.received.response(id);
      expect(client.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${id}","result":{"finished":"anyway"}}`);
    });
  });

  describe('in memory (the log record)', () => {
    it('logs a $/cancel_request with malformed params through the connection logger', async () => {
      const logger = captureLogger();
      const peer = new RawPeer({ logger });
      peer.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: { nested: 1 } } });
      peer.send({ jsonrpc: '2.0', id: 'b', method: 'never-registered' });
      await peer.out.response('b');
      const record = logger.records.find((r) => r.message.includes('$/cancel_request'));
      expect(record?.level).to.equal('warn');
      expect(record?.message).to.include('malformed').and.include('{"requestId":{"nested":1}}');
      await peer.close();
    });
  });
});
