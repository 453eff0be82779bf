/**
 * The conductor's request deadline: with `--request-timeout MS` (the library's
 * `requestTimeoutMs`), a request forwarded toward an agent that is alive but never answers is
 * cancelled on the hop and answered `-32603` `{"reason":"request_timeout","method"}`. Driven
 * through the real conductor with raw NDJSON and a fixture agent that never answers.
 */
import { expect } from 'chai';
import { Conductor, createConnectionPair } from '../../lib';
import { AGENT_COMMAND, PASSTHROUGH_COMMAND, spawnConductor, traceJson, traceOf } from '../helpers/chain';
import { CLIENT_INIT } from '../helpers/conformance-agent';
import { hasMethod, isCancelFor, isResponseTo, lineMatching } from '../helpers/messages';
import { fixtureArgs, useBuild, type SpawnedProcess } from '../helpers/processes';

/** The command line of the fixture agent that never answers (after the build). */
const muteAgent = (): string => ['node', ...fixtureArgs('mute-agent')].join(' ');
const INIT_LINE = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":${JSON.stringify(CLIENT_INIT)}}`;

function timedOut(id: number | string, method: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32603,"message":"Internal error","data":{"reason":"request_timeout","method":"${method}"}}}`;
}

/** A deadline well above a round trip on a loaded machine (the tests wait for it, never time it). */
const DEADLINE = '2000';

/** Spawns the conductor, waits until the mute agent (if any) reads, and completes `initialize`. */
async function startChain(args: readonly string[]): Promise<SpawnedProcess> {
  const chain = spawnConductor(args);
  if (args.some((arg) => arg.includes('mute-agent'))) await chain.stderr.take(lineMatching(/^mute-agent ready$/));
  chain.send(INIT_LINE);
  expect(await chain.stdout.take(isResponseTo(0))).to.match(/^\{"jsonrpc":"2\.0","id":0,"result":/);
  return chain;
}

describe('acp-wire conduct --request-timeout', function () {
  this.timeout(30000);
  useBuild();

  let chain: SpawnedProcess | undefined;
  afterEach(async () => {
    await chain?.stop(); // at once when it already exited
    chain = undefined;
  });

  it('answers -32603 request_timeout when the agent never answers, and cancels it there exactly once', async () => {
    chain = await startChain(['--trace', '--request-timeout', DEADLINE, muteAgent()]);
    chain.send('{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}');
    expect(await chain.stdout.take(isResponseTo(1))).to.equal(timedOut(1, 'session/prompt'));
    const agentId = traceJson(await chain.stderr.take(traceOf('agent', '->', hasMethod('session/prompt')))).id;
    const received = JSON.parse(await chain.request(2, '_mute/received')) as { result: unknown };
    expect(received.result).to.deep.equal({ requests: [{ id: agentId, method: 'session/prompt' }], cancels: [agentId] });
    expect(chain.stderr.matching(traceOf('agent', '->', isCancelFor()))).to.have.length(1);
    expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
  });

  it('times out every hop of a chain through a proxy: the client is answered, the agent cancelled once', async () => {
    chain = await startChain(['--trace', '--request-timeout', DEADLINE, PASSTHROUGH_COMMAND, muteAgent()]);
    chain.send('{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"s"}}');
    expect(await chain.stdout.take(isResponseTo('p'))).to.equal(timedOut('p', 'session/prompt'));
    const agentId = traceJson(await chain.stderr.take(traceOf('agent', '->', hasMethod('session/prompt')))).id;
    await chain.stderr.take(traceOf('agent', '->', isCancelFor(agentId)));
    const received = JSON.parse(await chain.request(2, '_mute/received')) as { result: unknown };
    expect((received.result as { cancels: unknown[] }).cancels).to.deep.equal([agentId]);
  });

  it("puts no deadline on the agent's requests to the client: an answer after the deadline still reaches the agent", async () => {
    chain = await startChain(['--trace', '--request-timeout', DEADLINE, AGENT_COMMAND]);
    chain.send('{"jsonrpc":"2.0","id":1,"method":"_test/callClient","params":{"method":"ask/person"}}');
    const ask = JSON.parse(await chain.stdout.take(hasMethod('ask/person'))) as { id: number };
    // The deadline of the client's request has passed, and later that of a second one: the
    // agent's request to the client has been pending longer than the deadline.
    expect(await chain.stdout.take(isResponseTo(1))).to.equal(timedOut(1, '_test/callClient'));
    chain.send('{"jsonrpc":"2.0","id":2,"method":"_test/sleep","params":{"ms":60000,"onCancel":"ignore"}}');
    expect(await chain.stdout.take(isResponseTo(2))).to.equal(timedOut(2, '_test/sleep'));
    chain.send(`{"jsonrpc":"2.0","id":${ask.id},"result":{"ok":true}}`);
    const agentAskId = traceJson(await chain.stderr.take(traceOf('agent', '<-', hasMethod('ask/person')))).id;
    const delivered = await chain.stderr.take(traceOf('agent', '->', (json) => json.id === agentAskId && 'result' in json));
    expect(traceJson(delivered)).to.deep.equal({ jsonrpc: '2.0', id: agentAskId, result: { ok: true } });
    expect(chain.stdout.matching(hasMethod('$/cancel_request'))).to.deep.equal([]);
  });

  it('refuses a bad value as bad usage', async () => {
    chain = spawnConductor(['--request-timeout', '1s', AGENT_COMMAND]);
    expect(await chain.exited).to.deep.equal({ code: 2, signal: null });
    expect(chain.stderr.lines).to.deep.equal([
      'acp-wire conduct: --request-timeout needs a number of milliseconds from 0 to 2147483647, got "1s" (see acp-wire conduct --help)',
    ]);
  });
});

describe('Conductor requestTimeoutMs', () => {
  for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, '300' as unknown as number]) {
    it(`throws RangeError naming requestTimeoutMs for ${String(value)}, starting nothing`, () => {
      const [client, other] = createConnectionPair();
      try {
        expect(() => new Conductor({ client, components: ['node nothing-is-started.js'], requestTimeoutMs: value })).to.throw(
          RangeError,
          'requestTimeoutMs',
        );
      } finally {
        void client.close();
        void other.close();
      }
    });
  }
});
