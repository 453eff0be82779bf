/**
 * W3C trace context: the traceparent helpers, and a real chain carrying `_meta.traceparent`,
 * `tracestate` and `baggage` hop by hop, each hop a child span.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import {
  childTraceparent,
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  readTraceFile,
  traceContextOf,
  withChildSpan,
  withTraceContext,
} from '../../lib/trace';
import type { JsonObject } from '../../lib';
import { AGENT_COMMAND, CLIENT_INIT, PASSTHROUGH_COMMAND, useTracedChains } from './helpers';

const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('parseTraceparent()', () => {
  it('splits a valid version-00 traceparent into its fields', () => {
    expect(parseTraceparent(VALID)).to.deep.equal({
      version: '00',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      flags: '01',
    });
  });

  it('rejects what the W3C recommendation calls invalid', () => {
    for (const value of [
      VALID.toUpperCase(),
      `${VALID}-extra`,
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1',
      '00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01',
      42,
      undefined,
    ]) {
      expect(parseTraceparent(value), String(value)).to.equal(undefined);
    }
  });

  it('reads the first four fields of a later version and ignores what follows', () => {
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-later')).to.include({
      version: '01',
      flags: '01',
    });
  });
});

describe('childTraceparent()', () => {
  it('keeps the trace id and flags and names a new random span as the parent', () => {
    const child = parseTraceparent(childTraceparent(VALID))!;
    expect(child.traceId).to.equal('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child.flags).to.equal('01');
    expect(child.parentId)
      .to.match(/^[0-9a-f]{16}$/)
      .and.not.equal('00f067aa0ba902b7');
    expect(childTraceparent(VALID, 'aaaaaaaaaaaaaaaa')).to.equal('00-4bf92f3577b34da6a3ce929d0e0e4736-aaaaaaaaaaaaaaaa-01');
  });

  it('gives a different span id each time', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newSpanId()));
    expect(ids.size).to.equal(100);
    expect(newTraceId()).to.match(/^[0-9a-f]{32}$/);
  });
});

describe('withTraceContext() and withChildSpan()', () => {
  it('attaches trace context to a copy of object params and keeps the other _meta keys', () => {
    const params = { sessionId: 's', _meta: { other: 1 } };
    expect(withTraceContext(params, { traceparent: VALID, tracestate: 'a=1', baggage: 'k=v' })).to.deep.equal({
      sessionId: 's',
      _meta: { other: 1, traceparent: VALID, tracestate: 'a=1', baggage: 'k=v' },
    });
    expect(params).to.deep.equal({ sessionId: 's', _meta: { other: 1 } });
  });

  it('replaces only the traceparent for the next hop, and returns other params as they are', () => {
    const params = { x: 1, _meta: { traceparent: VALID, tracestate: 'a=1', baggage: 'k=v' } };
    const next = withChildSpan(params, 'bbbbbbbbbbbbbbbb') as typeof params;
    expect(next).to.deep.equal({
      x: 1,
      _meta: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-bbbbbbbbbbbbbbbb-01', tracestate: 'a=1', baggage: 'k=v' },
    });
    const invalid = { _meta: { traceparent: 'nonsense' } };
    for (const same of [invalid, { x: 1 }, [1, 2], undefined]) expect(withChildSpan(same)).to.equal(same);
  });

  it('reads the trace context of a message', () => {
    expect(traceContextOf({ _meta: { traceparent: VALID, baggage: 'k=v' } })).to.deep.equal({ traceparent: VALID, baggage: 'k=v' });
    expect(traceContextOf({ _meta: { traceparent: 'x' } })).to.equal(undefined);
  });
});

describe('trace context through a chain', function () {
  this.timeout(30000);
  const chains = useTracedChains();

  it('delivers traceparent to the agent as a child of the client span through two proxies, a new span per hop', async () => {
    const file = join(chains.dir, 'trace.jsons');
    const chain = chains.start([PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND], { traceFile: file });
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    const clientSpan = formatTraceparent({ traceId: newTraceId(), parentId: newSpanId(), flags: '01' });
    const sent = withTraceContext({ n: 1 }, { traceparent: clientSpan, tracestate: 'vendor=opaque', baggage: 'user=alice' });
    const echoed = (await chain.client.sendRequest('_test/echo', sent)) as { _meta: JsonObject };

    const client = parseTraceparent(clientSpan)!;
    const atAgent = parseTraceparent(echoed._meta.traceparent)!;
    expect(atAgent.traceId).to.equal(client.traceId);
    expect(atAgent.flags).to.equal(client.flags);
    expect(atAgent.parentId).not.to.equal(client.parentId);
    expect(echoed._meta).to.include({ tracestate: 'vendor=opaque', baggage: 'user=alice' });

    // The trace shows the span each hop received: one trace, a new parent on every hop, the
    // last one the span the agent was given.
    const hops = readTraceFile(file).filter((event) => event.type === 'request' && event.method === '_test/echo');
    const received = hops.map(
      (event) => parseTraceparent((event as unknown as { params: { _meta: JsonObject } }).params._meta.traceparent)!,
    );
    expect(hops.map((event) => event.to)).to.deep.equal(['Proxy(0)', 'Proxy(1)', 'Agent']);
    expect(received.map((parent) => parent.traceId)).to.deep.equal([client.traceId, client.traceId, client.traceId]);
    const parents = [client.parentId, ...received.map((parent) => parent.parentId)];
    expect(new Set(parents).size).to.equal(4);
    expect(received[2]!.parentId).to.equal(atAgent.parentId);
  });

  it('carries trace context on notifications too, and leaves messages without it unchanged', async () => {
    const chain = chains.start([PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND]);
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    const clientSpan = formatTraceparent({ traceId: newTraceId(), parentId: newSpanId(), flags: '00' });
    chain.client.sendNotification('_test/note', withTraceContext({ n: 1 }, { traceparent: clientSpan }));
    chain.client.sendNotification('_test/note', { n: 2, _meta: { traceparent: 'not-valid' } });
    const { notifications } = (await chain.client.sendRequest('_test/received')) as { notifications: { params: { _meta: JsonObject } }[] };
    const [traced, untouched] = notifications;
    const atAgent = parseTraceparent(traced!.params._meta.traceparent)!;
    expect(atAgent.traceId).to.equal(parseTraceparent(clientSpan)!.traceId);
    expect(atAgent.parentId).not.to.equal(parseTraceparent(clientSpan)!.parentId);
    expect(untouched!.params).to.deep.equal({ n: 2, _meta: { traceparent: 'not-valid' } });
  });
});
