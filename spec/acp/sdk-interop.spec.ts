/**
 * acp-wire's ACP helpers and the official SDK (`@agentclientprotocol/sdk`), both ways, both
 * versions: the SDK's v1 agent (default entry point) and v2 agent
 * (`experimental/v2`) driven by AcpClient; the SDK's clients against AcpAgent; version refusals
 * byte for byte. In process, over a pair of streams.
 */
import * as acpV1 from '@agentclientprotocol/sdk';
import * as acpV2 from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { PassThrough, Readable, Writable } from 'node:stream';
import { AcpAgent, AcpClient, Connection, RpcError, type SessionUpdate } from '../../lib';
import { LineRecorder } from '../helpers/acp-lines';

type SdkStream = ReturnType<typeof acpV1.ndJsonStream>;

/** An acp-wire Connection and an SDK stream, wired to each other. */
function streamPair(logger = new LineRecorder()): { connection: Connection; stream: SdkStream; trace: LineRecorder } {
  const toSdk = new PassThrough();
  const toWire = new PassThrough();
  const connection = new Connection(toWire, toSdk, { logger });
  const stream = acpV1.ndJsonStream(
    Writable.toWeb(toWire) as WritableStream<Uint8Array>,
    Readable.toWeb(toSdk) as ReadableStream<Uint8Array>,
  );
  return { connection, stream, trace: logger };
}

const TEXT = [{ type: 'text' as const, text: 'hello' }];
const textOf = (updates: SessionUpdate[]): string =>
  updates
    .filter((update) => update.sessionUpdate === 'agent_message_chunk')
    .map((update) => (update as { content: { text: string } }).content.text)
    .join('');

/** Resolves when `signal` aborts (at once if it already has). */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

/** The SDK's v1 agent: one chunk, then `end_turn`, or with `_meta.wait` until `session/cancel`. */
function sdkV1Agent(): acpV1.AgentApp {
  const cancels = new Map<string, AbortController>();
  return acpV1
    .agent({ name: 'sdk-v1-agent' })
    .onRequest(acpV1.methods.agent.initialize, () => ({
      protocolVersion: acpV1.PROTOCOL_VERSION,
      agentInfo: { name: 'sdk-v1-agent', version: '1.0.0' },
      agentCapabilities: {},
      authMethods: [],
    }))
    .onRequest(acpV1.methods.agent.session.new, () => ({ sessionId: 'sdk-session' }))
    .onRequest(acpV1.methods.agent.session.prompt, async ({ params, client }) => {
      const controller = new AbortController();
      cancels.set(params.sessionId, controller);
      await client.notify(acpV1.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'from the SDK' } },
      });
      if (!(params._meta as { wait?: boolean } | null | undefined)?.wait) return { stopReason: 'end_turn' as const };
      await aborted(controller.signal);
      return { stopReason: 'cancelled' as const };
    })
    .onNotification(acpV1.methods.agent.session.cancel, ({ params }) => cancels.get(params.sessionId)?.abort());
}

/** The SDK's v2 agent: `{messageId}`, then user_message, running, one chunk and idle (`cancelled` after `session/cancel` with `_meta.wait`). */
function sdkV2Agent(): acpV2.AgentApp {
  const cancels = new Map<string, AbortController>();
  return acpV2
    .agent({ name: 'sdk-v2-agent' })
    .onRequest(acpV2.methods.agent.initialize, () => ({
      protocolVersion: acpV2.PROTOCOL_VERSION,
      info: { name: 'sdk-v2-agent', version: '2.0.0' },
      capabilities: {},
    }))
    .onRequest(acpV2.methods.agent.session.new, () => ({ sessionId: 'sdk-session' }))
    .onRequest(acpV2.methods.agent.session.prompt, ({ params, client }) => {
      const controller = new AbortController();
      cancels.set(params.sessionId, controller);
      const update = (value: acpV2.SessionUpdate): Promise<void> =>
        client.notify(acpV2.methods.client.session.update, { sessionId: params.sessionId, update: value });
      // The turn runs after the answer: v2 answers `session/prompt` on insertion.
      setImmediate(async () => {
        await update({ sessionUpdate: 'user_message', messageId: 'user-1', content: params.prompt });
        await update({ sessionUpdate: 'state_update', state: 'running' });
        await update({ sessionUpdate: 'agent_message_chunk', messageId: 'agent-1', content: { type: 'text', text: 'from the SDK' } });
        if ((params._meta as { wait?: boolean } | null | undefined)?.wait) await aborted(controller.signal);
        const stopReason = controller.signal.aborted ? 'cancelled' : 'end_turn';
        await update({ sessionUpdate: 'state_update', state: 'idle', stopReason } as acpV2.SessionUpdate);
      });
      return { messageId: 'user-1' };
    })
    .onNotification(acpV2.methods.agent.session.cancel, ({ params }) => cancels.get(params.sessionId)?.abort());
}

/** Drives `app` with an AcpClient: a turn to its end, then a turn cancelled with `turn.cancel()`. */
async function driveWithAcpClient(app: acpV1.AgentApp | acpV2.AgentApp, protocolVersions?: readonly (1 | 2)[]) {
  const { connection, stream } = streamPair();
  const handle = app.connect(stream);
  try {
    const client = new AcpClient(connection, protocolVersions ? { protocolVersions } : {});
    const agent = await client.initialize();
    const { sessionId } = await client.newSession({ cwd: '/tmp' });
    const updates: SessionUpdate[] = [];
    const result = await client.prompt({ sessionId, prompt: TEXT }, { onUpdate: (update) => updates.push(update) });
    const waiting = client.prompt({ sessionId, prompt: TEXT, _meta: { wait: true } });
    for await (const update of waiting) if (update.sessionUpdate === 'agent_message_chunk') break;
    waiting.cancel();
    const cancelled = await waiting;
    return { agent, result, text: textOf(updates), cancelled };
  } finally {
    await connection.close();
    await handle.closed;
  }
}

describe("the official ACP SDK and acp-wire's helpers", () => {
  describe('AcpClient drives', () => {
    it("the SDK's v1 agent: negotiates v1 and ends the turn with the prompt's answer", async () => {
      const { agent, result, text, cancelled } = await driveWithAcpClient(sdkV1Agent());
      expect(agent).to.deep.include({ protocolVersion: 1, info: { name: 'sdk-v1-agent', version: '1.0.0' } });
      expect(result).to.deep.equal({ version: 1, stopReason: 'end_turn', messageId: undefined, response: { stopReason: 'end_turn' } });
      expect(text).to.equal('from the SDK');
      expect(cancelled.stopReason).to.equal('cancelled');
    });

    it("the SDK's v2 agent: negotiates v2 and ends the turn with the idle update", async () => {
      const { agent, result, text, cancelled } = await driveWithAcpClient(sdkV2Agent());
      expect(agent).to.deep.include({ protocolVersion: 2, info: { name: 'sdk-v2-agent', version: '2.0.0' } });
      expect(result).to.deep.include({ version: 2, stopReason: 'end_turn', messageId: 'user-1' });
      expect(text).to.equal('from the SDK');
      expect(cancelled).to.deep.include({ version: 2, stopReason: 'cancelled' });
    });
  });

  describe("the SDK's clients drive AcpAgent", () => {
    /** AcpAgent on one end of a stream pair; `run` connects an SDK client to the other. */
    async function withAcpAgent<T>(run: (stream: SdkStream) => Promise<T>, protocolVersions?: readonly (1 | 2)[]): Promise<T> {
      const { connection, stream } = streamPair();
      new AcpAgent(connection, {
        info: { name: 'acp-wire-agent', version: '1.0.0' },
        ...(protocolVersions ? { protocolVersions } : {}),
        prompt(turn) {
          turn.sendText('from acp-wire');
          return 'end_turn';
        },
      });
      try {
        return await run(stream);
      } finally {
        await connection.close();
      }
    }

    const v1Client =
      <T>(op: (ctx: acpV1.ClientContext) => Promise<T>) =>
      (stream: SdkStream) =>
        acpV1.client({ name: 'sdk-client' }).connectWith(stream, op);
    const v2Client =
      <T>(op: (ctx: acpV2.ClientContext) => Promise<T>) =>
      (stream: SdkStream) =>
        acpV2.client({ name: 'sdk-client' }).connectWith(stream as unknown as Parameters<acpV2.ClientApp['connectWith']>[0], op);

    it("the SDK's v1 client: a whole turn in v1", async () => {
      const outcome = await withAcpAgent(
        v1Client(async (ctx) => {
          const init = await ctx.request(acpV1.methods.agent.initialize, { protocolVersion: 1, clientInfo: { name: 'sdk', version: '1' } });
          return ctx.buildSession('/tmp').withSession(async (session) => {
            const stop = session.prompt('hi');
            return { init, text: await session.readText(), stop: await stop };
          });
        }),
      );
      expect(outcome).to.deep.equal({
        init: {
          protocolVersion: 1,
          agentInfo: { name: 'acp-wire-agent', version: '1.0.0' },
          agentCapabilities: {
            loadSession: true,
            sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {}, additionalDirectories: {} },
          },
          authMethods: [],
        },
        text: 'from acp-wire',
        stop: { stopReason: 'end_turn' },
      });
    });

    it("the SDK's v2 client: a whole turn in v2", async () => {
      const outcome = await withAcpAgent(
        v2Client(async (ctx) => {
          const init = await ctx.request(acpV2.methods.agent.initialize, { protocolVersion: 2, info: { name: 'sdk', version: '2' } });
          const session = await ctx.buildSession('/tmp').start();
          try {
            const { messageId } = await session.prompt('hi');
            return { init, messageId, text: await session.readTextUntilIdle() };
          } finally {
            session.dispose();
          }
        }),
      );
      expect(outcome.init).to.deep.include({ protocolVersion: 2, info: { name: 'acp-wire-agent', version: '1.0.0' } });
      expect(outcome.messageId).to.be.a('string');
      expect(outcome.text).to.equal('from acp-wire');
    });

    it("the SDK's v1 client gets -32022 {requested: 1, supported: [2]} from a v2-only AcpAgent", async () => {
      const error = await withAcpAgent(
        v1Client((ctx) =>
          ctx.request(acpV1.methods.agent.initialize, { protocolVersion: 1 }).then(
            () => undefined,
            (reason: unknown) => reason,
          ),
        ),
        [2],
      );
      expect(error)
        .to.be.instanceOf(acpV1.RequestError)
        .and.to.deep.include({ code: -32022, message: 'Unsupported protocol version', data: { requested: 1, supported: [2] } });
    });
  });

  describe('version refusals', () => {
    it("AcpAgent refuses an unsupported version with exactly the line the SDK's v2 agent sends", async () => {
      const request =
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"c","version":"1"}}}';
      const answers: string[] = [];
      for (const serve of [
        (connection: Connection) =>
          void new AcpAgent(connection, { info: { name: 'a', version: '1' }, protocolVersions: [2], prompt: () => undefined }),
        null,
      ]) {
        const toAgent = new PassThrough();
        const fromAgent = new PassThrough();
        let close: () => Promise<unknown>;
        if (serve) {
          const connection = new Connection(toAgent, fromAgent);
          serve(connection);
          close = () => connection.close();
        } else {
          const handle = sdkV2Agent().connect(
            acpV2.ndJsonStream(
              Writable.toWeb(fromAgent) as WritableStream<Uint8Array>,
              Readable.toWeb(toAgent) as ReadableStream<Uint8Array>,
            ),
          );
          close = async () => {
            toAgent.end();
            await handle.closed;
          };
        }
        const line = new Promise<string>((resolve) => fromAgent.once('data', (chunk: Buffer) => resolve(chunk.toString().split('\n')[0]!)));
        toAgent.write(`${request}\n`);
        answers.push(await line);
        await close();
      }
      expect(answers[0]).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":1,"supported":[2]}}}',
      );
      expect(answers[1]).to.equal(answers[0]);
    });

    it("AcpClient offering v1 to the SDK's v2 agent rejects with its -32022 as sent", async () => {
      const { connection, stream } = streamPair();
      const handle = sdkV2Agent().connect(stream);
      try {
        const error = await new AcpClient(connection, { protocolVersions: [1] }).initialize().then(
          () => undefined,
          (reason: unknown) => reason,
        );
        expect(error)
          .to.be.instanceOf(RpcError)
          .and.to.deep.include({ code: -32022, data: { requested: 1, supported: [2] } });
      } finally {
        await connection.close();
        await handle.closed;
      }
    });
  });
});
