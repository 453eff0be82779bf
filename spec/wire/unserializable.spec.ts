/**
 * A received value that cannot be serialized again (JSON.parse accepts any
 * nesting, JSON.stringify overflows the stack past a few thousand levels) never crashes a hop that
 * forwards it. Driven through the real conductor and passthrough proxy processes with raw NDJSON.
 */
import { expect } from 'chai';
import { AGENT_COMMAND, PASSTHROUGH_COMMAND, spawnConductor } from '../helpers/chain';
import { CLIENT_INIT } from '../helpers/conformance-agent';
import { deeplyNestedArray } from '../helpers/fuzz';
import { hasMethod, isResponseTo, lineMatching } from '../helpers/messages';
import { PASSTHROUGH_PROXY, spawnScript, useBuild, type SpawnedProcess } from '../helpers/processes';
import { connectRaw } from '../helpers/sockets';

/** 20,000 levels: a 40 KB line that JSON.parse reads and JSON.stringify cannot write. */
const DEEP = deeplyNestedArray(20_000);
const CAUSE = 'RangeError: Maximum call stack size exceeded';
const INIT_LINE = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":${JSON.stringify(CLIENT_INIT)}}`;

/** The `-32603` answer for a forwarded message that could not be serialized again. */
function unserializable(reason: 'unserializable_response' | 'unserializable_request', method: string): string {
  return `{"code":-32603,"message":"Internal error","data":{"reason":"${reason}","method":"${method}","cause":"${CAUSE}"}}`;
}

async function startChain(args: readonly string[]): Promise<SpawnedProcess> {
  const chain = spawnConductor(args);
  chain.send(INIT_LINE);
  await chain.stdout.take(isResponseTo(0));
  return chain;
}

describe('a forwarded message that cannot be serialized again', function () {
  this.timeout(30000);
  useBuild();

  describe('acp-wire conduct', () => {
    let chain: SpawnedProcess | undefined;
    afterEach(async () => {
      await chain?.stop(); // at once when it already exited
      chain = undefined;
    });

    for (const [label, args] of [
      ['agent only', [AGENT_COMMAND]],
      ['through the passthrough proxy', [PASSTHROUGH_COMMAND, AGENT_COMMAND]],
    ] as const) {
      it(`answers the agent -32603 naming the cause when the client's answer is nested 20,000 deep, and goes on (${label})`, async () => {
        chain = await startChain(args);
        chain.send('{"jsonrpc":"2.0","id":1,"method":"_test/callClient","params":{"method":"x"}}');
        const x = JSON.parse(await chain.stdout.take(hasMethod('x'))) as { id: number };
        chain.send(`{"jsonrpc":"2.0","id":${x.id},"result":${DEEP}}`);
        expect(await chain.stdout.take(isResponseTo(1))).to.equal(
          `{"jsonrpc":"2.0","id":1,"result":{"response":${unserializable('unserializable_response', 'x')}}}`,
        );
        expect(await chain.request(2, '_test/echo', { still: 'alive' })).to.equal('{"jsonrpc":"2.0","id":2,"result":{"still":"alive"}}');
        expect(chain.child.exitCode).to.equal(null);
        expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
      });
    }

    it("answers the agent -32603 naming the cause when the client's error data is nested 20,000 deep", async () => {
      chain = await startChain([AGENT_COMMAND]);
      chain.send('{"jsonrpc":"2.0","id":1,"method":"_test/callClient","params":{"method":"x"}}');
      const x = JSON.parse(await chain.stdout.take(hasMethod('x'))) as { id: number };
      chain.send(`{"jsonrpc":"2.0","id":${x.id},"error":{"code":1,"message":"deep","data":${DEEP}}}`);
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(
        `{"jsonrpc":"2.0","id":1,"result":{"response":${unserializable('unserializable_response', 'x')}}}`,
      );
    });

    it('answers the client -32603 naming the cause when its request params are nested 20,000 deep', async () => {
      chain = await startChain([PASSTHROUGH_COMMAND, AGENT_COMMAND]);
      chain.send(`{"jsonrpc":"2.0","id":"deep","method":"_test/echo","params":{"a":${DEEP}}}`);
      expect(await chain.stdout.take(isResponseTo('deep'))).to.equal(
        `{"jsonrpc":"2.0","id":"deep","error":${unserializable('unserializable_request', '_test/echo')}}`,
      );
      expect(await chain.request(2, '_test/echo', [2])).to.equal('{"jsonrpc":"2.0","id":2,"result":[2]}');
    });

    it('drops a notification nested 20,000 deep with a warning on stderr, and goes on', async () => {
      chain = await startChain([AGENT_COMMAND]);
      chain.send(`{"jsonrpc":"2.0","method":"_test/note","params":{"a":${DEEP}}}`);
      chain.send('{"jsonrpc":"2.0","method":"_test/note","params":{"a":1}}');
      expect(await chain.request(1, '_test/received')).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"notifications":[{"method":"_test/note","params":{"a":1}}]}}',
      );
      expect(chain.stderr.matching(lineMatching(/ warn .*`_test\/note`/))).to.have.length(1);
    });

    it('with --tcp, keeps serving the other clients while one sends a 20,000-deep answer', async () => {
      chain = spawnConductor(['--tcp', '0', AGENT_COMMAND]);
      const port = Number(/^listening (\d+)$/.exec(await chain.stdout.take())![1]);
      const [bad, good] = await Promise.all([connectRaw(port), connectRaw(port)]);
      try {
        for (const client of [bad, good]) {
          client.send(INIT_LINE);
          await client.lines.take(isResponseTo(0));
        }
        bad.send('{"jsonrpc":"2.0","id":1,"method":"_test/callClient","params":{"method":"x"}}');
        const x = JSON.parse(await bad.lines.take(hasMethod('x'))) as { id: number };
        bad.send(`{"jsonrpc":"2.0","id":${x.id},"result":${DEEP}}`);
        expect(await bad.lines.take(isResponseTo(1))).to.equal(
          `{"jsonrpc":"2.0","id":1,"result":{"response":${unserializable('unserializable_response', 'x')}}}`,
        );
        good.send('{"jsonrpc":"2.0","id":1,"method":"_test/echo","params":[1]}');
        expect(await good.lines.take(isResponseTo(1))).to.equal('{"jsonrpc":"2.0","id":1,"result":[1]}');
      } finally {
        await Promise.all([bad.close(), good.close()]);
      }
      expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
    });
  });

  describe('examples/passthrough-proxy', () => {
    let proxy: SpawnedProcess;
    let stdout: SpawnedProcess['stdout'];
    let child: SpawnedProcess['child'];
    const send = (line: string): void => proxy.send(line);
    beforeEach(async () => {
      proxy = spawnScript(PASSTHROUGH_PROXY);
      ({ stdout, child } = proxy);
      send('{"jsonrpc":"2.0","id":"c1","method":"proxy/initialize","params":{}}');
      await stdout.take(hasMethod('proxy/successor'));
      send('{"jsonrpc":"2.0","id":1,"result":{}}');
      await stdout.take(isResponseTo('c1'));
    });
    afterEach(async () => {
      await proxy.stop();
    });

    it("answers the client -32603 naming the cause when the successor's answer is nested 20,000 deep, and goes on", async () => {
      send('{"jsonrpc":"2.0","id":"c2","method":"session/new","params":{}}');
      expect(await stdout.take()).to.equal(
        '{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{}}}',
      );
      send(`{"jsonrpc":"2.0","id":2,"result":${DEEP}}`);
      expect(await stdout.take(isResponseTo('c2'))).to.equal(
        `{"jsonrpc":"2.0","id":"c2","error":${unserializable('unserializable_response', 'session/new')}}`,
      );
      send('{"jsonrpc":"2.0","id":"c3","method":"session/new","params":{}}');
      expect(await stdout.take()).to.equal(
        '{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/new","params":{}}}',
      );
      expect(child.exitCode).to.equal(null);
    });

    it("answers the successor -32603 naming the cause when its request's params are nested 20,000 deep", async () => {
      send(`{"jsonrpc":"2.0","id":"s1","method":"proxy/successor","params":{"method":"fs/read","params":{"a":${DEEP}}}}`);
      expect(await stdout.take(isResponseTo('s1'))).to.equal(
        `{"jsonrpc":"2.0","id":"s1","error":${unserializable('unserializable_request', 'fs/read')}}`,
      );
    });
  });
});
