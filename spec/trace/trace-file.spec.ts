/**
 * The trace file of a real chain: client → conductor → two passthrough proxies → conformance
 * agent (spawned processes), read back and compared event by event.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { RpcError, type JsonObject } from '../../lib';
import { readTraceFile } from '../../lib/trace';
import { AGENT_COMMAND, CLIENT_INIT, PASSTHROUGH_COMMAND, schemaErrors, startTracedChain, withoutTs, useTracedChains } from './helpers';

const CHAIN = [PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND];
/** The hops from the client to the agent, as trace events name them. */
const HOPS = [
  ['Client', 'Proxy(0)'],
  ['Proxy(0)', 'Proxy(1)'],
  ['Proxy(1)', 'Agent'],
] as const;

/** The events a request makes on every hop down and its answer on every hop back, ids per hop. */
function roundTrip(method: string, params: unknown, ids: readonly number[], payload: unknown, isError = false): object[] {
  const down = HOPS.map(([from, to], hop) => request(from, to, ids[hop]!, method, params));
  const up = [...HOPS].reverse().map(([to, from], back) => {
    return { type: 'response', from, to, id: ids[HOPS.length - 1 - back]!, is_error: isError, payload };
  });
  return [...down, ...up];
}

function request(from: string, to: string, id: number, method: string, params: unknown): object {
  const session = sessionOf(params);
  return { type: 'request', protocol: 'acp', from, to, id, method, ...session, params };
}

/** A notification travelling from the agent to the client, one event per hop. */
function toClient(method: string, params: unknown): object[] {
  return [...HOPS]
    .reverse()
    .map(([to, from]) => ({ type: 'notification', protocol: 'acp', from, to, method, ...sessionOf(params), params }));
}

function sessionOf(params: unknown): { session?: string } {
  const sessionId = (params as { sessionId?: unknown } | null)?.sessionId;
  return typeof sessionId === 'string' ? { session: sessionId } : {};
}

/** Sorts events (without `ts`) into a canonical order, to compare sets of events. */
function canonical(events: readonly object[]): string[] {
  return events.map((event) => JSON.stringify(event)).sort();
}

describe('Conductor traceFile', function () {
  this.timeout(30000);
  const chains = useTracedChains();

  it('writes exactly the events of an initialize, a prompt and a cancelled request, per hop, envelopes unwrapped', async () => {
    const file = join(chains.dir, 'trace.jsons');
    const chain = chains.start(CHAIN, { traceFile: file });
    const { client } = chain;
    const updates: JsonObject[] = [];
    const idle = new Promise<void>((resolve) => {
      client.onNotification('session/update', (params: JsonObject) => {
        updates.push(params);
        if ((params.update as JsonObject).state === 'idle') resolve();
      });
    });

    const initialized = await client.sendRequest('initialize', CLIENT_INIT);
    const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
    const promptParams = { sessionId, prompt: [{ type: 'text', text: 'hello' }] };
    const prompted = await client.sendRequest('session/prompt', promptParams);
    await idle;
    const sleep = client.sendRequest('_test/sleep', { ms: 60000 });
    // The cancel is sent once the request has reached the agent (the agent's hop is in the trace).
    await chain.waitForEvent((event) => event.type === 'request' && event.method === '_test/sleep' && event.to === 'Agent');
    sleep.cancel();
    const cancelled = await sleep.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(cancelled).to.be.instanceOf(RpcError).with.property('code', -32800);

    const events = readTraceFile(file);
    for (const event of events) expect(schemaErrors(event), JSON.stringify(event)).to.equal('');
    const cancelError = { code: -32800, message: 'Request cancelled' };
    const expected = [
      ...roundTrip('initialize', CLIENT_INIT, [1, 1, 1], initialized),
      ...roundTrip('session/new', { cwd: '/', mcpServers: [] }, [2, 2, 2], { sessionId }),
      ...roundTrip('session/prompt', promptParams, [3, 3, 3], prompted),
      ...updates.flatMap((update) => toClient('session/update', update)),
      ...HOPS.map(([from, to]) => request(from, to, 4, '_test/sleep', { ms: 60000 })),
      ...HOPS.map(([from, to]) => ({
        type: 'notification',
        protocol: 'acp',
        from,
        to,
        method: '$/cancel_request',
        params: { requestId: 4 },
      })),
      ...[...HOPS].reverse().map(([to, from]) => ({ type: 'response', from, to, id: 4, is_error: true, payload: cancelError })),
    ];
    expect(canonical(events.map(withoutTs))).to.deep.equal(canonical(expected));
    expect(updates.map((update) => (update.update as JsonObject).sessionUpdate)).to.include('agent_message_chunk');
  });

  it('orders the events as they happened: ts never decreases, a request precedes its answer, a cancel its hop by hop path', async () => {
    const file = join(chains.dir, 'trace.jsons');
    const chain = chains.start(CHAIN, { traceFile: file });
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    const sleep = chain.client.sendRequest('_test/sleep', { ms: 60000 });
    await chain.waitForEvent((event) => event.type === 'request' && event.method === '_test/sleep' && event.to === 'Agent');
    sleep.cancel();
    await sleep.then(undefined, () => undefined);

    const events = readTraceFile(file);
    const times = events.map((event) => event.ts);
    expect(times).to.deep.equal([...times].sort((a, b) => a - b));
    const sleepPath = events
      .filter((event) => event.type !== 'request' || event.method === '_test/sleep')
      .filter((event) => !('method' in event) || event.method !== 'initialize')
      .filter((event) => event.type !== 'response' || event.is_error)
      .map((event) => `${event.type === 'notification' ? event.method : event.type} ${event.from}→${event.to}`);
    expect(sleepPath).to.deep.equal([
      'request Client→Proxy(0)',
      'request Proxy(0)→Proxy(1)',
      'request Proxy(1)→Agent',
      '$/cancel_request Client→Proxy(0)',
      '$/cancel_request Proxy(0)→Proxy(1)',
      '$/cancel_request Proxy(1)→Agent',
      'response Agent→Proxy(1)',
      'response Proxy(1)→Proxy(0)',
      'response Proxy(0)→Client',
    ]);
  });

  it("shows a request from the agent to the client with each hop's own id", async () => {
    const file = join(chains.dir, 'trace.jsons');
    const chain = chains.start(CHAIN, { traceFile: file });
    chain.client.onRequest('client/ask', (params) => ({ answered: params }));
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    await chain.client.sendRequest('_test/echo', { warm: 'up' });
    const answer = await chain.client.sendRequest('_test/callClient', { method: 'client/ask', params: { q: 1 } });
    expect(answer).to.deep.equal({ response: { answered: { q: 1 } } });

    const asks = readTraceFile(file).filter((event) => event.type === 'request' && event.method === 'client/ask');
    expect(asks.map((event) => [event.from, event.to])).to.deep.equal([
      ['Agent', 'Proxy(1)'],
      ['Proxy(1)', 'Proxy(0)'],
      ['Proxy(0)', 'Client'],
    ]);
    // The agent numbers its own requests from 1; each proxy numbers the requests it sends to the
    // conductor (two envelopes before this one), so the ids differ hop by hop.
    expect(asks.map((event) => (event as { id: unknown }).id)).to.deep.equal([1, 4, 4]);
    const answers = readTraceFile(file).filter(
      (event) => event.type === 'response' && JSON.stringify(event.payload) === '{"answered":{"q":1}}',
    );
    expect(answers.map((event) => [event.from, event.to, (event as { id: unknown }).id])).to.deep.equal([
      ['Client', 'Proxy(0)', 4],
      ['Proxy(0)', 'Proxy(1)', 4],
      ['Proxy(1)', 'Agent', 1],
    ]);
  });

  it('truncates an existing file and has every event on disk as soon as it happened', async () => {
    const file = join(chains.dir, 'trace.jsons');
    writeFileSync(file, 'old content that is not a trace\n'.repeat(100));
    const chain = chains.start(CHAIN, { traceFile: file });
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    // Read while the chain still runs: nothing is closed or flushed by a shutdown yet.
    const events = readTraceFile(file);
    expect(events.map((event) => `${event.type} ${event.from}→${event.to}`)).to.deep.equal([
      'request Client→Proxy(0)',
      'request Proxy(0)→Proxy(1)',
      'request Proxy(1)→Agent',
      'response Agent→Proxy(1)',
      'response Proxy(1)→Proxy(0)',
      'response Proxy(0)→Client',
    ]);
  });

  it('throws the file system error before starting anything when the file cannot be created', () => {
    expect(() => startTracedChain(CHAIN, { traceFile: join(chains.dir, 'missing', 'trace.jsons') }))
      .to.throw()
      .with.property('code', 'ENOENT');
  });
});
