/**
 * The conductor and a passthrough proxy in ACP v1 and v2: the version negotiated on
 * each hop is recorded and shown by `--trace`; prompts, `session/cancel` and `$/cancel_request`
 * work hop by hop in both versions; an error response without an `id` (what codex-acp answers to
 * `$/cancel_request`) is logged and dropped, and the request still gets its one answer.
 * Needs the build (`npm test` builds first; a spec run alone builds when stale).
 */
import { expect } from 'chai';
import { AGENT_COMMAND, PASSTHROUGH_COMMAND, spawnConductor, traceJson, traceOf } from '../helpers/chain';
import { hasMethod, isCancelFor, isResponseTo, parseMessage } from '../helpers/messages';
import { useBuild, type SpawnedProcess } from '../helpers/processes';

const CHAIN = ['--trace', PASSTHROUGH_COMMAND, AGENT_COMMAND];
const PROMPT = [{ type: 'text', text: 'hi there' }];
const IDLESS_ERROR = '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"$/cancel_request"}}';

for (const version of [1, 2] as const) {
  describe(`acp-wire conduct → passthrough proxy → conformance agent (ACP v${version})`, function () {
    this.timeout(30_000);
    useBuild();

    let chain: SpawnedProcess;
    let sessionId: string;

    beforeEach(async () => {
      chain = spawnConductor(CHAIN);
      const init = parseMessage(await chain.request(0, 'initialize', { protocolVersion: version, info: { name: 'spec', version: '1' } }));
      expect(init.result).to.deep.include({ protocolVersion: version });
      sessionId = (parseMessage(await chain.request(1, 'session/new', { cwd: '/tmp', mcpServers: [] })).result as { sessionId: string })
        .sessionId;
    });

    afterEach(async () => {
      expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
    });

    it(`records ACP v${version} on every hop and shows it in --trace`, async () => {
      for (const hop of ['agent', 'proxy1', 'client']) {
        expect(await chain.stderr.take((_, line) => line.endsWith(` ${hop} debug negotiated ACP v${version}`))).to.be.a('string');
      }
    });

    it('runs a prompt turn to end_turn', async () => {
      chain.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT } });
      const answer = JSON.parse(await chain.stdout.take(isResponseTo(2))) as { result: Record<string, unknown> };
      if (version === 1) {
        expect(answer.result).to.deep.equal({ stopReason: 'end_turn' });
        expect(chain.stdout.matching(hasMethod('session/update'))).to.have.length(3);
      } else {
        expect(answer.result).to.have.property('messageId');
        const idle = await chain.stdout.take((_, line) => line.includes('"state":"idle"'));
        expect(JSON.parse(idle)).to.deep.include({
          params: { sessionId, update: { sessionUpdate: 'state_update', state: 'idle', stopReason: 'end_turn' } },
        });
      }
    });

    it('session/cancel ends a running turn cancelled', async () => {
      chain.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT, _meta: { workMs: 60_000 } } });
      await chain.stdout.take((_, line) => line.includes('agent_message_chunk'));
      chain.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      if (version === 1) {
        expect(await chain.stdout.take(isResponseTo(2))).to.equal('{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}');
      } else {
        const idle = await chain.stdout.take((_, line) => line.includes('"state":"idle"'));
        expect(JSON.parse(idle)).to.deep.include({
          params: { sessionId, update: { sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' } },
        });
      }
    });

    it('$/cancel_request for a prompt is re-issued hop by hop and the prompt is answered -32800', async () => {
      // v1: a running turn; v2: a prompt not inserted yet (after insertion v2 answers success).
      const meta = version === 1 ? { workMs: 60_000 } : { insertDelayMs: 60_000 };
      chain.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT, _meta: meta } });
      const onAgent = traceJson(await chain.stderr.take(traceOf('agent', '->', (m) => m.method === 'session/prompt'))).id;
      chain.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 2 } });
      expect(await chain.stdout.take(isResponseTo(2))).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}}',
      );
      expect(chain.stderr.matching(traceOf('agent', '->', isCancelFor(onAgent)))).to.have.length(1);
      expect(chain.stderr.matching(traceOf('proxy1', '->', isCancelFor()))).to.have.length(1);
    });

    it('drops an error response without an id from the client, and the request still gets its one answer', async () => {
      chain.send({ jsonrpc: '2.0', id: 2, method: '_test/callClient', params: { method: 'client/slow', cancelAfterMs: 1 } });
      const request = JSON.parse(await chain.stdout.take(hasMethod('client/slow'))) as { id: number };
      await chain.stdout.take(hasMethod('$/cancel_request'));
      chain.send(IDLESS_ERROR);
      chain.send({ jsonrpc: '2.0', id: request.id, error: { code: -32800, message: 'Request cancelled' } });
      expect(await chain.stdout.take(isResponseTo(2))).to.equal(
        '{"jsonrpc":"2.0","id":2,"result":{"response":{"code":-32800,"message":"Request cancelled"}}}',
      );
      expect(await chain.stderr.take((_, line) => line.includes('client warn ProtocolError: dropped a malformed response'))).to.be.a(
        'string',
      );
      expect(parseMessage(await chain.request(3, '_test/echo', ['still here'])).result).to.deep.equal(['still here']);
      expect(chain.stdout.lines.filter((line) => line.includes('"id":null'))).to.deep.equal([]);
    });
  });
}
