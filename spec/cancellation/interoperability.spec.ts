/**
 * request-cancellation.txt, section "Interoperability": one spec per sentence. Wire rules run over
 * child-process stdio (the wire agent) or a real TCP socket; detach() runs in memory.
 */
import { expect } from 'chai';
import { RequestDetachedError, type Connection, type Responder } from '../../lib';
import { serveOverTcp, startWireAgent, type WireEndpoint } from '../helpers/cancellation';
import { collectGarbage } from '../helpers/events';
import { isCancelFor, isResponse, sameId } from '../helpers/messages';
import { tappedPair, type TappedPair } from '../helpers/peers';
import { useBuild } from '../helpers/processes';

/** Sends a request, keeps nothing of it but the detach, so it can be collected. */
function sendDetached(client: Connection, method: string): void {
  client.sendRequest(method).detach();
}

/** Sends a request and drops it unconsumed (the positive control of drop-cancel). */
function sendAndDrop(client: Connection, method: string): void {
  client.sendRequest(method);
}

describe('Request cancellation: Interoperability', () => {
  describe('over the wire', () => {
    useBuild();
    let endpoint: WireEndpoint | undefined;
    afterEach(async () => {
      await endpoint?.close();
      endpoint = undefined;
    });

    it('treats $/-prefixed notifications as optional: a component without handlers for them keeps working', async () => {
      const agent = await startWireAgent();
      endpoint = agent;
      agent.send({ jsonrpc: '2.0', method: '$/progress', params: { token: 't', value: 50 } });
      agent.send({ jsonrpc: '2.0', method: '$/unknown_extension' });
      agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'never-sent' } });
      const answer = await agent.call('_test/echo', { still: 'working' });
      expect(answer.result).to.deep.equal({ still: 'working' });
      expect(agent.received.matching(isResponse).length).to.equal(2); // initialize and the echo
    });

    it('ignores unhandled notifications instead of rejecting them with a method-not-found error', async () => {
      endpoint = await serveOverTcp(() => {
        // A component with no handler at all.
      });
      endpoint.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      endpoint.send({ jsonrpc: '2.0', method: '$/progress', params: {} });
      endpoint.send({ jsonrpc: '2.0', method: 'plain/notification', params: [] });
      const answer = await endpoint.call('some/request');
      // Requests still get -32601; the three notifications got nothing.
      expect(endpoint.received.lines).to.deep.equal([
        `{"jsonrpc":"2.0","id":"${answer.id}","error":{"code":-32601,"message":"Method not found","data":"some/request"}}`,
      ]);
    });

    it('loses nothing when a $/cancel_request reaches a handler without cancellation support: the request runs to completion', async () => {
      const agent = await startWireAgent();
      endpoint = agent;
      const id = agent.nextId();
      agent.send({ jsonrpc: '2.0', id, method: '_test/hold', params: { ms: 100 } });
      agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
      const answer = await agent.received.response(id);
      expect(agent.received.lineOf(answer)).to.equal(`{"jsonrpc":"2.0","id":"${id}","result":{"held":true}}`);
    });

    it('asks the peer to cancel (exactly one $/cancel_request with its id) when an unconsumed SentRequest is dropped', async () => {
      const agent = await startWireAgent();
      endpoint = agent;
      const call = agent.call('_test/callClient', { method: 'client/slow', params: { n: 1 }, drop: true });
      const request = await agent.received.findMessage((m) => m.method === 'client/slow');
      const cancel = await agent.received.findMessage(isCancelFor(request.id));
      expect(agent.received.lineOf(cancel)).to.equal(
        `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(request.id)}}}`,
      );
      expect((await call).result).to.deep.equal({ dropped: true });
      // The peer still answers; the late answer is harmless and nothing more is sent for it.
      agent.send({ jsonrpc: '2.0', id: request.id, error: { code: -32800, message: 'Request cancelled' } });
      await agent.call('_test/gc');
      await agent.call('_test/echo', { barrier: true });
      expect(agent.received.matching(isCancelFor(request.id)).length).to.equal(1);
    });
  });

  describe('in memory', () => {
    let pair: TappedPair;
    let held: Responder[];
    beforeEach(() => {
      pair = tappedPair();
      held = [];
      pair.right.onRequest('work', (_params, responder) => void held.push(responder));
    });
    afterEach(async () => {
      await pair.close();
    });

    it('keeps a detached request running on the peer: dropping it sends no cancel, and the peer finishes it', async () => {
      sendDetached(pair.left, 'work');
      sendAndDrop(pair.left, 'work');
      const requests = await Promise.all([1, 2].map((id) => pair.fromLeft.findMessage((m) => m.method === 'work' && sameId(m.id, id))));
      await collectGarbage();
      // The control (request 2) is cancelled on drop; the detached request 1 is not.
      await pair.fromLeft.findMessage(isCancelFor(2));
      expect(pair.fromLeft.matching(isCancelFor(1)).length).to.equal(0);
      expect(held[0]!.isCancelled).to.equal(false);
      held[0]!.respond({ finished: true });
      await pair.fromRight.response(requests[0]!.id!);
      held[1]!.respondCancelled();
    });

    it('discards the eventual response of a detached request without a warning; an await already waiting rejects at once', async () => {
      const warnings: unknown[] = [];
      pair.left.on('warning', (warning) => warnings.push(warning));
      const sent = pair.left.sendRequest('work');
      const waiting = sent.then(
        () => 'resolved',
        (error: unknown) => error,
      );
      sent.detach();
      expect(await waiting)
        .to.be.instanceOf(RequestDetachedError)
        .and.include({ code: 'ACP_WIRE_REQUEST_DETACHED', method: 'work' });
      await pair.fromLeft.findMessage((m) => m.method === 'work');
      held[0]!.respond({ ignored: true });
      await pair.fromRight.response(sent.id);
      await pair.left.sendNotification('after', {});
      await pair.fromLeft.findMessage((m) => m.method === 'after');
      expect(sent.isSettled).to.equal(true);
      expect(warnings).to.deep.equal([]);
      expect(pair.left.pendingCount).to.equal(0);
    });

    it('still expects the peer to answer a detached request (it stays pending until then); a notification expects nothing', async () => {
      const sent = pair.left.sendRequest('work');
      sent.detach();
      pair.left.sendNotification('fire-and-forget', { n: 1 });
      await pair.fromLeft.findMessage((m) => m.method === 'fire-and-forget');
      expect(pair.left.pendingCount).to.equal(1);
      held[0]!.respond(null);
      await pair.fromRight.response(sent.id);
      expect(pair.left.pendingCount).to.equal(0);
    });
  });
});
