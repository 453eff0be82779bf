/**
 * The conformance agent's ACP messages: every one validates against the ACP v2 JSON schema, and
 * the official SDK's v2 client (`@agentclientprotocol/sdk/experimental/v2`) accepts them.
 * Needs dist/: useBuild() builds it when it is missing or stale.
 */
import * as acp from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { agentLineErrors, isAcpMethod } from '../helpers/acp-schema';
import { CLIENT_INIT, spawnAgent } from '../helpers/conformance-agent';
import { isResponseTo } from '../helpers/messages';
import { type SpawnedProcess, useBuild } from '../helpers/processes';
import { SDK_CLIENT_INFO, sdkCancelBeforeInsertion, sdkFirstTurn, sdkInitialize, withAgentProcess } from '../helpers/sdk-client';

describe('conformance agent (ACP v2)', () => {
  useBuild();

  describe('ACP v2 JSON schema', () => {
    let agent: SpawnedProcess;
    const seen: string[] = [];
    const methodOf = new Map<number, string>();
    let nextId = 1;

    /** Sends a request, keeps every line up to its answer, and returns the answer. */
    async function call(method: string, params: object, then?: (id: number) => void): Promise<Record<string, unknown>> {
      const id = nextId++;
      methodOf.set(id, method);
      agent.send({ jsonrpc: '2.0', id, method, params });
      then?.(id);
      const lines = await agent.stdout.takeUntil(isResponseTo(id));
      seen.push(...lines);
      return JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
    }

    async function untilIdle(): Promise<void> {
      seen.push(...(await agent.stdout.takeUntil((_, line) => line.includes('"state":"idle"'))));
    }

    before(async () => {
      agent = spawnAgent();
      await call('initialize', { ...CLIENT_INIT, _meta: { test: 'error' } });
      await call('initialize', CLIENT_INIT);
      const { result } = await call('session/new', { cwd: '/tmp', mcpServers: [] });
      const { sessionId } = result as { sessionId: string };
      const prompt = [{ type: 'text', text: 'validate me' }];
      await call('session/prompt', { sessionId, prompt });
      await untilIdle();
      await call('session/prompt', { sessionId, prompt, _meta: { workMs: 60_000 } });
      agent.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
      await untilIdle();
      await call('session/prompt', { sessionId, prompt, _meta: { insertDelayMs: 60_000 } }, (id) =>
        agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } }),
      );
      await call('session/prompt', { sessionId: 'unknown', prompt });
      methodOf.set(nextId, '_test/callClient');
      agent.send({ jsonrpc: '2.0', id: nextId, method: '_test/callClient', params: { method: 'client/slow', cancelAfterMs: 1 } });
      const [request, cancel] = await agent.stdout.takeLines(2);
      agent.send({ jsonrpc: '2.0', id: (JSON.parse(request) as { id: number }).id, error: { code: -32800, message: 'Request cancelled' } });
      seen.push(request, cancel, ...(await agent.stdout.takeUntil(isResponseTo(nextId))));
    });

    after(async () => {
      await agent.stop();
    });

    it('validates every ACP message the agent sent', () => {
      const checked = seen.filter((line) => {
        const message = JSON.parse(line) as { id?: number; method?: string };
        return isAcpMethod(message.method ?? methodOf.get(message.id!) ?? '');
      });
      const errors = checked.flatMap((line) => {
        const message = JSON.parse(line) as { id?: number; method?: string };
        return agentLineErrors(line, message.method ?? methodOf.get(message.id!)!).map((error) => `${line}\n  ${error}`);
      });
      expect(errors).to.deep.equal([]);
      expect(checked).to.have.length(18);
    });

    it('covered every kind of ACP message the agent sends', () => {
      const kinds = new Set(
        seen.map((line) => {
          const message = JSON.parse(line) as {
            method?: string;
            id?: number;
            error?: { code: number };
            params?: { update?: Record<string, string> };
          };
          if (message.method === 'session/update')
            return `update ${message.params!.update!.sessionUpdate} ${message.params!.update!.stopReason ?? ''}`.trim();
          if (message.method) return message.method;
          return `${methodOf.get(message.id!)} ${message.error ? message.error.code : 'result'}`;
        }),
      );
      expect([...kinds].sort()).to.deep.equal([
        '$/cancel_request',
        '_test/callClient result',
        'client/slow',
        'initialize -32603',
        'initialize result',
        'session/new result',
        'session/prompt -32002',
        'session/prompt -32800',
        'session/prompt result',
        'update agent_message_chunk',
        'update state_update',
        'update state_update cancelled',
        'update state_update end_turn',
        'update user_message',
      ]);
    });
  });

  describe('the official SDK v2 client', () => {
    /** Runs `op` with an SDK client connected to a fresh agent over stdio; the agent must exit 0. */
    const withSdkClient = <T>(op: (ctx: acp.ClientContext) => Promise<T>): Promise<T> =>
      withAgentProcess(({ output, input }) => acp.client({ name: SDK_CLIENT_INFO.name }).connectWith(acp.ndJsonStream(output, input), op));

    it('initializes, creates a session and prompts the agent', async () => {
      const outcome = await withSdkClient((ctx) => sdkFirstTurn(ctx, 'hello from the SDK'));
      expect(outcome.init).to.deep.include({
        protocolVersion: 2,
        info: { name: 'acp-wire-conformance-agent', version: outcome.init.info.version },
      });
      expect(outcome.messageId).to.be.a('string').and.not.equal('');
      expect(outcome.text).to.equal('echo: hello from the SDK');
    });

    it('sees the turn that session/cancel stops end idle with stopReason "cancelled"', async () => {
      const stopReason = await withSdkClient(async (ctx) => {
        await sdkInitialize(ctx);
        const session = await ctx.buildSession('/tmp').start();
        try {
          const prompt = [{ type: 'text' as const, text: 'long work' }];
          await ctx.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt, _meta: { workMs: 60_000 } });
          for (;;) {
            const message = await session.nextUpdate();
            if (message.kind === 'stop') return message.stopReason;
            if (message.update.sessionUpdate === 'agent_message_chunk')
              await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
          }
        } finally {
          session.dispose();
        }
      });
      expect(stopReason).to.equal('cancelled');
    });

    it('gets -32800 for a prompt cancelled before insertion', async () => {
      const error = await withSdkClient(sdkCancelBeforeInsertion);
      expect(error).to.be.instanceOf(acp.RequestError).and.to.include({ code: -32800 });
    });
  });
});
