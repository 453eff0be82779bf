/**
 * How `acp-wire conduct` ends when things go wrong, through the real process: a component that
 * cannot be started and SIGTERM/SIGINT with an agent that never reads its stdin.
 */
import { expect } from 'chai';
import { AGENT_COMMAND, spawnConductor, traceOf } from '../helpers/chain';
import { CLIENT_INIT } from '../helpers/conformance-agent';
import { hasMethod, isResponseTo, parseMessage } from '../helpers/messages';
import { pidExists } from '../helpers/process-table';
import { useBuild, type SpawnedProcess } from '../helpers/processes';

const INIT_LINE = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":${JSON.stringify(CLIENT_INIT)}}`;
const STUCK_AGENT = `node -e "console.error('stuck agent', process.pid); setInterval(() => {}, 1000)"`;

function notStartedLine(id: string, command: string, code: string, cause: string): string {
  const data = { reason: 'component_not_started', component: 'agent', command, code, cause };
  return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32603,"message":"Internal error","data":${JSON.stringify(data)}}}`;
}

describe('acp-wire conduct, ending', function () {
  this.timeout(30000);
  useBuild();

  let chain: SpawnedProcess | undefined;
  const strays: number[] = [];
  afterEach(async () => {
    if (chain && chain.child.exitCode === null && chain.child.signalCode === null) {
      chain.child.kill('SIGKILL');
      await chain.exited;
    }
    for (const pid of strays.splice(0)) if (pidExists(pid)) process.kill(pid, 'SIGKILL');
    chain = undefined;
  });

  describe('when the agent cannot be started', () => {
    it('answers every request the client sent with -32603 naming the agent and the cause (ENOENT), then exits 1', async () => {
      const command = 'acp-wire-no-such-agent --verbose';
      chain = spawnConductor([command]);
      chain.send(`${INIT_LINE}\n{"jsonrpc":"2.0","id":"s","method":"session/new","params":{"cwd":"/","mcpServers":[]}}`);
      const cause = 'spawn acp-wire-no-such-agent ENOENT';
      expect(await chain.stdout.take(isResponseTo(0))).to.equal(notStartedLine('0', command, 'ENOENT', cause));
      expect(await chain.stdout.take(isResponseTo('s'))).to.equal(notStartedLine('"s"', command, 'ENOENT', cause));
      chain.child.stdin!.end();
      expect(await chain.exited).to.deep.equal({ code: 1, signal: null });
      expect(chain.stdout.lines).to.have.length(2);
      expect(chain.stderr.lines).to.include(`acp-wire conduct: agent (${command}) could not be started (${cause})`);
    });

    it('answers a request sent after the first answer too, and exits 1 by itself once the client is quiet', async () => {
      chain = spawnConductor([__dirname]);
      const cause = `spawn ${__dirname} EACCES`;
      chain.send(INIT_LINE);
      expect(await chain.stdout.take(isResponseTo(0))).to.equal(notStartedLine('0', __dirname, 'EACCES', cause));
      chain.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(notStartedLine('1', __dirname, 'EACCES', cause));
      expect(await chain.exited).to.deep.equal({ code: 1, signal: null });
    });
  });

  describe('on SIGTERM, with an agent that never reads its stdin and bytes queued for it', () => {
    it('ends the chain, the agent included, and exits 143', async () => {
      chain = spawnConductor(['--trace', '--kill-timeout', '100', STUCK_AGENT]);
      const pid = Number(/^stuck agent (\d+)$/.exec(await chain.stderr.take((_, line) => line.startsWith('stuck agent')))![1]);
      strays.push(pid);
      // Far more than a pipe holds: most of it stays queued in the conductor.
      chain.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { big: 'x'.repeat(1 << 20) } }));
      await chain.stderr.take(traceOf('agent', '->', hasMethod('x')));
      chain.child.kill('SIGTERM');
      expect(await chain.exited).to.deep.equal({ code: 143, signal: null });
      expect(pidExists(pid), 'the agent is gone').to.equal(false);
    });
  });

  describe('on SIGINT', () => {
    const PENDING_SLEEP_ANSWER =
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"reason":"incoming_transport_closed","method":"_test/sleep"}}}';

    /** A chain with `_test/sleep` in flight at the agent. */
    async function sleepingChain(args: string[]): Promise<SpawnedProcess> {
      const started = spawnConductor(['--trace', ...args, AGENT_COMMAND]);
      started.send(INIT_LINE);
      await started.stdout.take(isResponseTo(0));
      started.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60000 } });
      await started.stderr.take(traceOf('agent', '->', hasMethod('_test/sleep')));
      return started;
    }

    it("keeps routing while the client's stdin is open (a Ctrl-C reaches the client too), and ends with the client: exit 130", async () => {
      // A grace far longer than the test: the chain can only end because the client ends it.
      chain = await sleepingChain(['--kill-timeout', '60000']);
      chain.child.kill('SIGINT');
      // What a client such as acpx does on Ctrl-C: it cancels its turn through the chain, then ends its stdin.
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 1 } });
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}',
      );
      expect(parseMessage(await chain.request(2, '_test/echo', ['after SIGINT']))).to.deep.equal({
        jsonrpc: '2.0',
        id: 2,
        result: ['after SIGINT'],
      });
      expect(await chain.stop()).to.deep.equal({ code: 130, signal: null });
    });

    it('shuts the chain down at once on a second SIGINT, answering the pending request, and exits 130', async () => {
      chain = await sleepingChain(['--kill-timeout', '60000']);
      chain.child.kill('SIGINT');
      // Once this is answered, the conductor has run since the first SIGINT: that signal was
      // delivered, so the second one cannot merge with it.
      expect(parseMessage(await chain.request(2, '_test/echo', ['routing']))).to.deep.equal({ jsonrpc: '2.0', id: 2, result: ['routing'] });
      chain.child.kill('SIGINT');
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(PENDING_SLEEP_ANSWER);
      expect(await chain.exited).to.deep.equal({ code: 130, signal: null });
    });

    it("shuts a working chain down once --kill-timeout has passed with the client's stdin still open, answering the pending request, and exits 130", async () => {
      chain = await sleepingChain([]);
      chain.child.kill('SIGINT');
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(PENDING_SLEEP_ANSWER);
      expect(await chain.exited).to.deep.equal({ code: 130, signal: null });
    });
  });

  describe("on SIGTERM, with the client's stdin open", () => {
    it('shuts the chain down at once, without the SIGINT grace, and exits 143', async () => {
      chain = spawnConductor(['--trace', '--kill-timeout', '60000', AGENT_COMMAND]);
      chain.send(INIT_LINE);
      await chain.stdout.take(isResponseTo(0));
      chain.send({ jsonrpc: '2.0', id: 1, method: '_test/sleep', params: { ms: 60000 } });
      await chain.stderr.take(traceOf('agent', '->', hasMethod('_test/sleep')));
      chain.child.kill('SIGTERM');
      expect(await chain.stdout.take(isResponseTo(1))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"reason":"incoming_transport_closed","method":"_test/sleep"}}}',
      );
      expect(await chain.exited).to.deep.equal({ code: 143, signal: null });
    });
  });
});
