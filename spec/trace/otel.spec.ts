/**
 * Optional OpenTelemetry: with a registered tracer provider (sdk-trace-base and an in-memory
 * exporter), every forwarded request of an in-process chain (conductor + two ProxyComponents +
 * the conformance agent) is a span, each hop the child of the previous one; without one, nothing
 * changes on the wire.
 */
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { ProxyComponent, RpcError, createConnectionPair, type ComponentSource, type JsonObject, type Logger } from '../../lib';
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent, withTraceContext } from '../../lib/trace';
import { CLIENT_INIT, startTracedChain, type TracedChain } from './helpers';

/**
 * Two in-process ProxyComponents and the conformance agent, each on an in-memory pair.
 * `agentReceived` resolves with each method the agent receives (read from its wire trace).
 */
function inProcessComponents(agentReceived?: (method: string) => void): ComponentSource[] {
  const [toProxy0, proxy0] = createConnectionPair();
  const [toProxy1, proxy1] = createConnectionPair();
  const agentLogger: Logger = {
    traces: true,
    log: (level, text) => {
      if (level === 'trace' && text.startsWith('<- ')) agentReceived?.((JSON.parse(text.slice(3)) as { method?: string }).method ?? '');
    },
  };
  const [toAgent, agent] = createConnectionPair({}, { logger: agentLogger });
  new ProxyComponent(proxy0);
  new ProxyComponent(proxy1);
  serveConformanceAgent(agent);
  return [{ connection: toProxy0 }, { connection: toProxy1 }, { connection: toAgent }];
}

function spansNamed(exporter: InMemorySpanExporter, name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.name === name);
}

/** Orders spans parent first, following parent ids from `rootParent`. */
function chainFrom(rootParent: string, spans: readonly ReadableSpan[]): ReadableSpan[] {
  const chain: ReadableSpan[] = [];
  let parent = rootParent;
  for (;;) {
    const child = spans.find((span) => span.parentSpanContext?.spanId === parent);
    if (!child) return chain;
    chain.push(child);
    parent = child.spanContext().spanId;
  }
}

describe('OpenTelemetry spans', function () {
  this.timeout(20000);
  let chain: TracedChain | undefined;
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider | undefined;

  afterEach(async () => {
    await chain?.close();
    chain = undefined;
    trace.disable();
    await provider?.shutdown();
    provider = undefined;
  });

  function registerProvider(): void {
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
  }

  it("records a span per hop of a forwarded request, each the child of the previous one, the first a child of the client's span", async () => {
    registerProvider();
    chain = startTracedChain(inProcessComponents());
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    const client = { traceId: newTraceId(), parentId: newSpanId(), flags: '01' };
    const echoed = (await chain.client.sendRequest(
      '_test/echo',
      withTraceContext({ n: 1 }, { traceparent: formatTraceparent(client) }),
    )) as {
      _meta: JsonObject;
    };

    const spans = spansNamed(exporter, '_test/echo');
    // conductor → proxy 0 → conductor → proxy 1 → conductor → agent: five forwarding hops.
    expect(spans).to.have.length(5);
    const hops = chainFrom(client.parentId, spans);
    expect(hops).to.have.length(5);
    for (const span of hops) {
      expect(span.spanContext().traceId).to.equal(client.traceId);
      expect(span.attributes).to.include({ 'rpc.system': 'jsonrpc', 'rpc.method': '_test/echo', 'acp_wire.outcome': 'result' });
      expect(span.attributes['acp_wire.forwarded_request_id']).to.be.a('string');
    }
    const atAgent = parseTraceparent(echoed._meta.traceparent)!;
    expect(atAgent.traceId).to.equal(client.traceId);
    expect(atAgent.parentId).to.equal(hops[4]!.spanContext().spanId);
  });

  it('marks a cancelled request on every hop: a $/cancel_request span event, cancelled, the automatic -32800 answer', async () => {
    registerProvider();
    let sleepArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (sleepArrived = resolve));
    chain = startTracedChain(inProcessComponents((method) => method === '_test/sleep' && sleepArrived()));
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    const sleep = chain.client.sendRequest(
      '_test/sleep',
      withTraceContext(
        { ms: 60000 },
        {
          traceparent: formatTraceparent({ traceId: newTraceId(), parentId: newSpanId(), flags: '01' }),
        },
      ),
    );
    await arrived;
    sleep.cancel();
    const error = await sleep.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).to.be.instanceOf(RpcError).with.property('code', -32800);

    const spans = spansNamed(exporter, '_test/sleep');
    expect(spans).to.have.length(5);
    for (const span of spans) {
      expect(span.attributes).to.include({
        'acp_wire.cancelled': true,
        'acp_wire.outcome': 'cancelled',
        'acp_wire.automatic_answer': 'cancelled',
        'rpc.jsonrpc.error_code': -32800,
      });
      expect(span.events.map((event) => event.name)).to.deep.equal(['$/cancel_request']);
      expect(span.events[0]!.attributes).to.include({ 'acp_wire.cancel_forwarded': true });
    }
  });

  it('changes nothing on the wire when no tracer provider is registered', async () => {
    chain = startTracedChain(inProcessComponents());
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    expect(await chain.client.sendRequest('_test/echo', { n: 1 })).to.deep.equal({ n: 1 });
    const traced = chain.events.filter((event) => event.type === 'request' && event.method === '_test/echo');
    expect(traced).to.have.length(0, 'in-process components are not traced by the conductor');
  });

  it('adds a traceparent naming the span when a provider records and the request had none', async () => {
    registerProvider();
    chain = startTracedChain(inProcessComponents());
    await chain.client.sendRequest('initialize', CLIENT_INIT);
    const echoed = (await chain.client.sendRequest('_test/echo', { n: 1 })) as { n: number; _meta: JsonObject };
    const hops = spansNamed(exporter, '_test/echo');
    const root = hops.find((span) => span.parentSpanContext === undefined)!;
    expect(chainFrom(root.spanContext().spanId, hops)).to.have.length(4);
    expect(parseTraceparent(echoed._meta.traceparent)!.traceId).to.equal(root.spanContext().traceId);
  });
});
