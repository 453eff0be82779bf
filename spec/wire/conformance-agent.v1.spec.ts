/**
 * The conformance agent in ACP v1: version negotiation, a v1 turn with exact lines,
 * every ACP message valid against the v1 JSON schema, and the official SDK's v1 client (the
 * package's default entry point) driving it.
 * Needs dist/: `npm test` builds first; run alone, the `before` hook builds when dist is stale.
 */
import * as acp from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { agentLineErrors, isAcpMethod } from '../helpers/acp-schema';
import { IdNamer, INIT_RESULT, PACKAGE_VERSION, spawnAgent } from '../helpers/conformance-agent';
import { isResponseTo } from '../helpers/messages';
import { useBuild, type SpawnedProcess } from '../helpers/processes';
import { SDK_CLIENT_INFO, withAgentProcess } from '../helpers/sdk-client';

const V1_INIT = {
  protocolVersion: 1,
  clientInfo: { name: 'spec-client', version: '1.0.0' },
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
};
const V1_RESULT = `{"protocolVersion":1,"agentInfo":{"name":"acp-wire-conformance-agent","version":"${PACKAGE_VERSION}"},"agentCapabilities":{"loadSession":true},"authMethods":[]}`;
const CANCEL = (id: number): string => `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${id}}}`;
const PROMPT = [{ type: 'text', text: 'hello acp' }];
const INVALID_VERSION = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"error":{"code":-32602,"message":"Invalid params","data":"\`protocolVersion\` must be an integer from 1 to 65535"}}`;

describe('conformance agent (ACP v1)', () => {
  let agent: SpawnedProcess;

  useBuild();

  afterEach(async () => {
    const exit = await agent.stop();
    expect(exit, agent.stderr.text).to.deep.equal({ code: 0, signal: null });
  });

  describe('initialize', () => {
    beforeEach(() => {
      agent = spawnAgent();
    });

    it('answers a requested version 1 with the v1 result: agentInfo, agentCapabilities, authMethods', async () => {
      expect(await agent.request(1, 'initialize', V1_INIT)).to.equal(`{"jsonrpc":"2.0","id":1,"result":${V1_RESULT}}`);
    });

    it('answers a requested version above 2 with version 2', async () => {
      expect(await agent.request(1, 'initialize', { protocolVersion: 7, info: { name: 'future', version: '9' } })).to.equal(
        `{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`,
      );
    });

    it('accepts v2 field names in a v1 initialize, and v1 field names in a v2 one', async () => {
      expect(await agent.request(1, 'initialize', { protocolVersion: 1, info: { name: 'x', version: '1' } })).to.equal(
        `{"jsonrpc":"2.0","id":1,"result":${V1_RESULT}}`,
      );
      const other = spawnAgent();
      try {
        expect(await other.request(1, 'initialize', { protocolVersion: 2, clientInfo: { name: 'x', version: '1' } })).to.equal(
          `{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`,
        );
      } finally {
        await other.stop();
      }
    });

    it('answers a missing, non-integer or smaller-than-1 version -32602 and stays uninitialized', async () => {
      expect(await agent.request(1, 'initialize', {})).to.equal(INVALID_VERSION(1));
      expect(await agent.request(2, 'initialize', { protocolVersion: 0 })).to.equal(INVALID_VERSION(2));
      expect(await agent.request(3, 'initialize', { protocolVersion: 1.5 })).to.equal(INVALID_VERSION(3));
      expect(await agent.request(4, 'initialize', { protocolVersion: '1' })).to.equal(INVALID_VERSION(4));
      expect(await agent.request(5, 'initialize', V1_INIT)).to.equal(`{"jsonrpc":"2.0","id":5,"result":${V1_RESULT}}`);
    });
  });

  describe('a v1 turn', () => {
    let names: IdNamer;
    let sessionId: string;
    const chunk = (text: string): string =>
      `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<id1>","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${text}"}}}}`;

    beforeEach(async () => {
      agent = spawnAgent();
      await agent.request(0, 'initialize', V1_INIT);
      names = new IdNamer();
      expect(names.name(await agent.request(1, 'session/new', { cwd: '/tmp', mcpServers: [] }))).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"<id1>"}}',
      );
      sessionId = names.idOf('<id1>');
    });

    it('streams the chunks, then answers the prompt {"stopReason":"end_turn"} at the end of the turn', async () => {
      agent.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT } });
      expect(names.names(await agent.stdout.takeLines(4))).to.deep.equal([
        chunk('echo: '),
        chunk('hello '),
        chunk('acp'),
        '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}',
      ]);
    });

    it('session/cancel ends a running turn with a success {"stopReason":"cancelled"}', async () => {
      agent.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT, _meta: { workMs: 60_000 } } });
      expect(names.name(await agent.stdout.take())).to.equal(chunk('echo: '));
      agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}');
    });

    it('a $/cancel_request for the running prompt answers it -32800', async () => {
      agent.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: PROMPT, _meta: { workMs: 60_000 } } });
      expect(names.name(await agent.stdout.take())).to.equal(chunk('echo: '));
      agent.send(CANCEL(2));
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}}');
    });

    it('a prompt held by insertDelayMs: $/cancel_request answers -32800, session/cancel answers cancelled', async () => {
      agent.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'session/prompt',
        params: { sessionId, prompt: PROMPT, _meta: { insertDelayMs: 60_000 } },
      });
      agent.send(CANCEL(2));
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}}');
      agent.send({
        jsonrpc: '2.0',
        id: 3,
        method: 'session/prompt',
        params: { sessionId, prompt: PROMPT, _meta: { insertDelayMs: 60_000 } },
      });
      agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      expect(await agent.stdout.take()).to.equal('{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}');
    });

    it('runs two prompts of one session one after the other, each answered at its own end', async () => {
      agent.send({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'one' }] } });
      agent.send({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'two' }] } });
      expect(names.names(await agent.stdout.takeLines(6))).to.deep.equal([
        chunk('echo: '),
        chunk('one'),
        '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}',
        chunk('echo: '),
        chunk('two'),
        '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}',
      ]);
    });

    it('keeps the _test/* methods', async () => {
      expect(await agent.request(2, '_test/echo', { v: 1 })).to.equal('{"jsonrpc":"2.0","id":2,"result":{"v":1}}');
    });
  });

  describe('ACP v1 JSON schema', () => {
    it('validates every ACP message the agent sent in v1', async () => {
      agent = spawnAgent();
      const seen: string[] = [];
      const methodOf = new Map<number, string>();
      const call = async (id: number, method: string, params: object, then?: () => void): Promise<string> => {
        methodOf.set(id, method);
        agent.send({ jsonrpc: '2.0', id, method, params });
        then?.();
        const lines = await agent.stdout.takeUntil(isResponseTo(id));
        seen.push(...lines);
        return lines[lines.length - 1]!;
      };
      await call(1, 'initialize', { ...V1_INIT, _meta: { test: 'error' } });
      await call(2, 'initialize', V1_INIT);
      const sessionId = (JSON.parse(await call(3, 'session/new', { cwd: '/tmp', mcpServers: [] })) as { result: { sessionId: string } })
        .result.sessionId;
      await call(4, 'session/prompt', { sessionId, prompt: PROMPT });
      await call(5, 'session/prompt', { sessionId, prompt: PROMPT, _meta: { workMs: 60_000 } }, () =>
        agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } }),
      );
      await call(6, 'session/prompt', { sessionId, prompt: PROMPT, _meta: { workMs: 60_000 } }, () => agent.send(CANCEL(6)));
      await call(7, 'session/prompt', { sessionId: 'unknown', prompt: PROMPT });
      const checked = seen.filter((line) =>
        isAcpMethod((JSON.parse(line) as { method?: string }).method ?? methodOf.get((JSON.parse(line) as { id: number }).id)!, 1),
      );
      const errors = checked.flatMap((line) => {
        const message = JSON.parse(line) as { id?: number; method?: string };
        return agentLineErrors(line, message.method ?? methodOf.get(message.id!)!, 1).map((error) => `${line}\n  ${error}`);
      });
      expect(errors).to.deep.equal([]);
      expect(checked.length).to.be.greaterThan(9);
      expect(
        seen
          .filter((line) => line.includes('"stopReason"'))
          .map((line) => (JSON.parse(line) as { result?: { stopReason: string } }).result?.stopReason),
      ).to.deep.equal(['end_turn', 'cancelled']);
    });
  });

  describe('the official SDK v1 client (default entry point)', () => {
    /** Runs `op` with an SDK v1 client connected to a fresh agent over stdio; the agent must exit 0. */
    function withSdkClient<T>(op: (ctx: acp.ClientContext) => Promise<T>): Promise<T> {
      // A dummy agent for the afterEach hook: this test owns its own process.
      agent = { stop: async () => ({ code: 0, signal: null }), stderr: { text: '' } } as unknown as SpawnedProcess;
      return withAgentProcess(({ output, input }) =>
        acp.client({ name: SDK_CLIENT_INFO.name }).connectWith(acp.ndJsonStream(output, input), op),
      );
    }

    const initialize = (ctx: acp.ClientContext): Promise<acp.InitializeResponse> =>
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientInfo: SDK_CLIENT_INFO,
      });

    it('negotiates v1, creates a session and reads a whole turn ending end_turn', async () => {
      const outcome = await withSdkClient(async (ctx) => {
        const init = await initialize(ctx);
        return ctx.buildSession('/tmp').withSession(async (session) => {
          const stop = session.prompt('hello from the SDK');
          return { init, text: await session.readText(), stop: await stop };
        });
      });
      expect(outcome.init).to.deep.include({
        protocolVersion: 1,
        agentInfo: { name: 'acp-wire-conformance-agent', version: PACKAGE_VERSION },
      });
      expect(outcome.text).to.equal('echo: hello from the SDK');
      expect(outcome.stop).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('sees session/cancel end the turn {stopReason: "cancelled"}', async () => {
      const stop = await withSdkClient(async (ctx) => {
        await initialize(ctx);
        return ctx.buildSession('/tmp').withSession(async (session) => {
          const prompt = ctx.request(acp.methods.agent.session.prompt, {
            sessionId: session.sessionId,
            prompt: [{ type: 'text', text: 'long work' }],
            _meta: { workMs: 60_000 },
          });
          const update = await session.nextUpdate();
          expect(update.kind).to.equal('session_update');
          await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
          return prompt;
        });
      });
      expect(stop).to.deep.equal({ stopReason: 'cancelled' });
    });

    it('gets -32800 for a prompt it cancels with $/cancel_request', async () => {
      const error = await withSdkClient(async (ctx) => {
        await initialize(ctx);
        return ctx.buildSession('/tmp').withSession(async (session) => {
          const controller = new AbortController();
          const params = { sessionId: session.sessionId, prompt: [{ type: 'text' as const, text: 'long' }], _meta: { workMs: 60_000 } };
          const prompt = ctx.request(acp.methods.agent.session.prompt, params, { cancellationSignal: controller.signal });
          await session.nextUpdate();
          controller.abort();
          return prompt.then(
            () => undefined,
            (reason: unknown) => reason,
          );
        });
      });
      expect(error).to.be.instanceOf(acp.RequestError).and.to.include({ code: -32800 });
    });
  });
});
