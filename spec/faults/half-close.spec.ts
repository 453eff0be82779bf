import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { Connection, ConnectionClosedError } from '../../lib';
import { track } from '../helpers/async';
import { nextEvent, UnhandledRejections } from '../helpers/events';
import { spawnFaultPeer } from '../helpers/faults';
import { LineReader } from '../helpers/lines';
import { HeldWritable, RawPeer } from '../helpers/peers';
import { childClosed, useBuild } from '../helpers/processes';

const request = (id: number | string, method: string, params?: unknown): string =>
  `${JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params })}\n`;

/** A raw peer whose connection answers `echo`, and holds `hold` requests (recording their signals) until it closes. */
function halfClosePeer(): { peer: RawPeer; held: AbortSignal[] } {
  const peer = new RawPeer();
  const held: AbortSignal[] = [];
  peer.connection.onRequest('echo', (params) => params);
  peer.connection.onRequest('hold', (_params, responder) => {
    held.push(responder.signal);
    // Answers once the connection has closed: that answer must go nowhere.
    responder.signal.addEventListener('abort', () => responder.respond({ late: true }));
  });
  return { peer, held };
}

describe('Connection whose peer half-closes (ends its write side)', () => {
  useBuild();
  const rejections = new UnhandledRejections();
  before(() => rejections.install());
  after(() => rejections.uninstall());

  describe('in memory', () => {
    it('rejects its own pending requests with ConnectionClosedError "input ended"', async () => {
      const { peer } = halfClosePeer();
      const asked = track(peer.connection.sendRequest('ask'));
      peer.input.end(request(1, 'echo', [1]));
      await asked.done;
      expect((asked.outcome as { reason: unknown }).reason)
        .to.be.instanceOf(ConnectionClosedError)
        .and.include({ reason: 'input ended', method: 'ask' });
    });

    it('flushes the answers queued when the input ended, then ends its output', async () => {
      const { peer } = halfClosePeer();
      // Requests and end of input arrive in one turn: the answers are still queued when the input ends.
      peer.input.end(request(1, 'echo', [1]) + request(2, 'echo', [2]) + request('held', 'hold') + request(3, 'echo', [3]));
      await nextEvent(peer.output, 'end');
      expect(peer.out.lines).to.deep.equal([1, 2, 3].map((id) => JSON.stringify({ jsonrpc: '2.0', id, result: [id] })));
    });

    it('sends no answer for a handler still running when the input ended, and aborts its signal', async () => {
      const { peer, held } = halfClosePeer();
      peer.input.end(request('held', 'hold'));
      await nextEvent(peer.output, 'end');
      expect(peer.out.lines).to.deep.equal([]);
      expect(held[0]!.reason).to.be.instanceOf(ConnectionClosedError).and.include({ reason: 'input ended' });
      expect(peer.connection.inflightCount).to.equal(0);
    });
  });

  describe('in memory, while its output cannot drain', () => {
    it('dispatches the messages it held back when the input ended, then closes', async () => {
      const input = new PassThrough();
      const output = new HeldWritable();
      const connection = new Connection(input, output);
      connection.onRequest('echo', (params) => params);
      const closed = nextEvent(connection, 'close');
      input.write(request(1, 'echo', [1]));
      await output.nextWrite();
      // The output is full: these are read and held, and the input ends meanwhile.
      input.end(request(2, 'echo', [2]) + request(3, 'echo', [3]));
      await nextEvent(input, 'end');
      expect(connection.isClosed).to.equal(false);
      output.release(false);
      expect(await closed).to.deep.equal(['input ended', undefined]);
      await connection.close();
      expect(output.lines).to.deep.equal([1, 2, 3].map((id) => JSON.stringify({ jsonrpc: '2.0', id, result: [id] })));
    });
  });

  describe('over a child process that ends its stdout', () => {
    it('answers every request received before the end, fails its own request, and lets the peer exit 0', async () => {
      const peer = spawnFaultPeer('halfclose', ['5']);
      const stderr = new LineReader(peer.child.stderr!);
      peer.connection.onRequest('echo', (params) => params);
      peer.connection.onRequest('hold', (_params, responder) => void responder.signal.addEventListener('abort', () => responder));
      const asked = track(peer.connection.sendRequest('ask'));
      const received = stderr.find((_, line) => line.startsWith('received '));
      await asked.done;
      expect((asked.outcome as { reason: unknown }).reason)
        .to.be.instanceOf(ConnectionClosedError)
        .and.include({ reason: 'input ended' });
      expect(await received).to.equal('received [1,2,3,4,5]');
      expect(await childClosed(peer.child)).to.deep.equal({ code: 0, signal: null });
    });
  });

  describe('afterwards', () => {
    it('leaves no rejection unhandled', () => {
      expect(rejections.reasons).to.deep.equal([]);
    });
  });
});
