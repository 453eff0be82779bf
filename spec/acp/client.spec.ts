import { expect } from 'chai';
import {
  AcpClient,
  ConnectionClosedError,
  NotificationHandlerError,
  RpcError,
  UnsupportedProtocolVersionError,
  createConnectionPair,
  negotiatedVersion,
  type AcpWireError,
  type Connection,
  type SessionUpdate,
  type SessionUpdateParams,
} from '../../lib';
import { closeAll, nextEvent } from '../helpers/events';

const UPDATE = (sessionId: string, sessionUpdate = 'state_update'): SessionUpdateParams =>
  ({ sessionId, update: { sessionUpdate, state: 'running' } }) as SessionUpdateParams;
const CHUNK = (text: string): SessionUpdate => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
const IDLE = (stopReason: string): SessionUpdate => ({ sessionUpdate: 'state_update', state: 'idle', stopReason }) as SessionUpdate;
const TEXT = [{ type: 'text' as const, text: 'hi' }];

describe('AcpClient', () => {
  let clientSide: Connection;
  let agent: Connection;
  let client: AcpClient;

  beforeEach(() => {
    [clientSide, agent] = createConnectionPair();
    client = new AcpClient(clientSide);
  });

  afterEach(() => closeAll(clientSide, agent));

  /** Resolves once every message the agent sent before it has been dispatched on the client side. */
  async function flushAgentToClient(): Promise<void> {
    clientSide.onRequest('_sync', () => null);
    await agent.sendRequest('_sync');
  }

  /** Resolves once every message the client sent before it has been dispatched on the agent side. */
  async function flushClientToAgent(): Promise<void> {
    agent.onRequest('_sync', () => null);
    await clientSide.sendRequest('_sync');
  }

  /** The agent answers initialize with `protocolVersion` and records what it received. */
  function answerInitialize(protocolVersion: unknown, extra: object = {}): unknown[] {
    const received: unknown[] = [];
    agent.onRequest('initialize', (params) => (received.push(params), { protocolVersion, ...extra }));
    return received;
  }

  describe('constructor', () => {
    it('throws TypeError without a connection', () => {
      expect(() => new AcpClient(undefined as unknown as Connection)).to.throw(TypeError, 'connection must be a Connection');
    });

    it('throws RangeError for an empty protocolVersions', () => {
      expect(() => new AcpClient(clientSide, { protocolVersions: [] })).to.throw(RangeError, 'protocolVersions');
    });
  });

  describe('#initialize()', () => {
    it('offers version 2 with v2 info/capabilities, and v1 clientInfo/clientCapabilities for a v1 agent', async () => {
      const received = answerInitialize(2);
      await client.initialize();
      expect(received).to.deep.equal([
        {
          protocolVersion: 2,
          info: { name: 'acp-wire-client', version: 'unspecified' },
          capabilities: {},
          clientInfo: { name: 'acp-wire-client', version: 'unspecified' },
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        },
      ]);
    });

    it('offers version 1 in the v1 shape only when asked to', async () => {
      const received = answerInitialize(1);
      await client.initialize({ protocolVersion: 1, info: { name: 'editor', version: '3.1' }, _meta: { trace: true } });
      expect(received).to.deep.equal([
        {
          protocolVersion: 1,
          clientInfo: { name: 'editor', version: '3.1' },
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
          _meta: { trace: true },
        },
      ]);
    });

    it('sends no v1 fields from a client that only speaks v2', async () => {
      const received = answerInitialize(2);
      await new AcpClient(clientSide, { protocolVersions: [2], info: { name: 'c', version: '1' } }).initialize();
      expect(received).to.deep.equal([{ protocolVersion: 2, info: { name: 'c', version: '1' }, capabilities: {} }]);
    });

    it('accepts a v1 answer to an offer of 2 and keeps the negotiated version on the connection', async () => {
      answerInitialize(1, { agentInfo: { name: 'old', version: '0.9' }, agentCapabilities: { loadSession: true }, authMethods: [] });
      expect(client.protocolVersion).to.equal(undefined);
      const agentInfo = await client.initialize();
      expect(agentInfo).to.deep.include({
        protocolVersion: 1,
        info: { name: 'old', version: '0.9' },
        capabilities: { loadSession: true },
        authMethods: [],
      });
      expect(client.protocolVersion).to.equal(1);
      expect(negotiatedVersion(clientSide)).to.equal(1);
      expect(client.agent).to.equal(agentInfo);
    });

    it('describes a v2 agent from its info, capabilities and raw result', async () => {
      const result = { protocolVersion: 2, info: { name: 'a', version: '1' }, capabilities: { session: {} } };
      agent.onRequest('initialize', () => result);
      expect(await client.initialize()).to.deep.equal({
        protocolVersion: 2,
        info: result.info,
        capabilities: { session: {} },
        authMethods: [],
        result,
      });
    });

    it('rejects with UnsupportedProtocolVersionError when the agent answers a version above the offer', async () => {
      answerInitialize(3);
      const error = await client.initialize().then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error)
        .to.be.instanceOf(UnsupportedProtocolVersionError)
        .and.to.include({ code: 'ACP_WIRE_UNSUPPORTED_PROTOCOL_VERSION', offered: 2, answered: 3 });
      expect(client.protocolVersion).to.equal(undefined);
      expect(clientSide.isClosed).to.equal(false);
    });

    it("rejects with the agent's -32022 refusal as it was sent", async () => {
      agent.onRequest('initialize', () => {
        throw new RpcError(-32022, 'Unsupported protocol version', { requested: 2, supported: [3] });
      });
      const error = await client.initialize().then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error)
        .to.be.instanceOf(RpcError)
        .and.to.deep.include({ code: -32022, data: { requested: 2, supported: [3] } });
    });

    it('keeps the previous state when a later initialize fails', async () => {
      let calls = 0;
      agent.onRequest('initialize', () => {
        if (++calls === 1) return { protocolVersion: 2, info: { name: 'a', version: '1' } };
        throw new RpcError(-32603, 'Internal error', 'nope');
      });
      const first = await client.initialize();
      await client.initialize().then(
        () => expect.fail('resolved'),
        () => undefined,
      );
      expect(client.agent).to.equal(first);
      expect(client.protocolVersion).to.equal(2);
    });
  });

  describe('#authenticate()', () => {
    it('sends authenticate on a v1 connection and auth/login on a v2 one', async () => {
      const methods: string[] = [];
      agent.onAnyRequest((params, responder) => {
        methods.push(`${responder.method} ${JSON.stringify(params)}`);
        return responder.method === 'initialize' ? { protocolVersion: methods.length === 1 ? 1 : 2 } : {};
      });
      await client.initialize();
      await client.authenticate('openai-api-key');
      const [otherSide, otherAgent] = createConnectionPair();
      otherAgent.onAnyRequest((params, responder) => {
        methods.push(`${responder.method} ${JSON.stringify(params)}`);
        return responder.method === 'initialize' ? { protocolVersion: 2 } : {};
      });
      const v2 = new AcpClient(otherSide);
      await v2.initialize();
      await v2.authenticate('token');
      await closeAll(otherSide, otherAgent);
      expect(methods.filter((line) => !line.startsWith('initialize'))).to.deep.equal([
        'authenticate {"methodId":"openai-api-key"}',
        'auth/login {"methodId":"token"}',
      ]);
    });
  });

  describe('#newSession()', () => {
    it('sends session/new with mcpServers [] unless given, and resolves with the result', async () => {
      const received: unknown[] = [];
      agent.onRequest('session/new', (params: { cwd: string }) => (received.push(params), { sessionId: `s-${params.cwd}` }));
      expect(await client.newSession({ cwd: '/work' })).to.deep.equal({ sessionId: 's-/work' });
      expect(received).to.deep.equal([{ cwd: '/work', mcpServers: [] }]);
    });
  });

  describe('#prompt() on a v1 agent', () => {
    beforeEach(async () => {
      answerInitialize(1);
      await client.initialize();
    });

    it('ends the turn with the session/prompt answer; its updates are those before the answer', async () => {
      agent.onRequest('session/prompt', async (params: { sessionId: string }) => {
        agent.sendNotification('session/update', { sessionId: params.sessionId, update: CHUNK('a') });
        agent.sendNotification('session/update', { sessionId: 'other', update: CHUNK('not mine') });
        agent.sendNotification('session/update', { sessionId: params.sessionId, update: CHUNK('b') });
        return { stopReason: 'end_turn' };
      });
      const turn = client.prompt({ sessionId: 's', prompt: TEXT });
      const texts: string[] = [];
      for await (const update of turn) texts.push((update as { content: { text: string } }).content.text);
      expect(await turn).to.deep.equal({ version: 1, stopReason: 'end_turn', messageId: undefined, response: { stopReason: 'end_turn' } });
      expect(texts).to.deep.equal(['a', 'b']);
      expect(turn.messageId).to.equal(undefined);
    });

    it("cancel() sends session/cancel once, and the turn ends with the agent's cancelled answer", async () => {
      const cancels: unknown[] = [];
      agent.onNotification('session/cancel', (params) => cancels.push(params));
      agent.onRequest('session/prompt', (_params, responder) => {
        agent.onNotification('session/cancel', (params) => (cancels.push(params), responder.respond({ stopReason: 'cancelled' })));
      });
      const turn = client.prompt({ sessionId: 's', prompt: TEXT });
      await flushClientToAgent();
      turn.cancel();
      turn.cancel();
      expect((await turn).stopReason).to.equal('cancelled');
      turn.cancel();
      await flushClientToAgent();
      expect(cancels).to.deep.equal([{ sessionId: 's' }]);
    });

    it('cancels the turn when the signal aborts, even one aborted before the prompt', async () => {
      const cancels: unknown[] = [];
      agent.onRequest('session/prompt', (_params, responder) => {
        agent.onNotification('session/cancel', (params) => (cancels.push(params), responder.respond({ stopReason: 'cancelled' })));
      });
      const controller = new AbortController();
      controller.abort();
      const turn = client.prompt({ sessionId: 's', prompt: TEXT }, { signal: controller.signal });
      expect((await turn).stopReason).to.equal('cancelled');
      expect(cancels).to.deep.equal([{ sessionId: 's' }]);
    });

    it("turn.request.cancel() sends $/cancel_request and the turn rejects with the agent's -32800", async () => {
      const cancels: unknown[] = [];
      agent.onNotification('$/cancel_request', (params) => cancels.push(params));
      agent.onRequest('session/prompt', (_params, responder) => {
        responder.signal.addEventListener('abort', () => responder.respondCancelled());
      });
      const turn = client.prompt({ sessionId: 's', prompt: TEXT });
      turn.request.cancel();
      const error = await turn.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).to.be.instanceOf(RpcError).and.to.include({ code: -32800 });
      expect(cancels).to.deep.equal([{ requestId: turn.request.id }]);
    });
  });

  describe('#prompt() on a v2 agent', () => {
    beforeEach(async () => {
      answerInitialize(2);
      await client.initialize();
    });

    it('ends the turn at the first idle update after the {messageId} answer, with both callback and iteration', async () => {
      agent.onRequest('session/prompt', (params: { sessionId: string }, responder) => {
        const send = (update: SessionUpdate): void => agent.sendNotification('session/update', { sessionId: params.sessionId, update });
        send(IDLE('end_turn')); // the end of earlier work: before the answer, so not this turn's end
        responder.respond({ messageId: 'm1' });
        send(CHUNK('x'));
        send(IDLE('max_tokens'));
        send(CHUNK('after the end'));
      });
      const seen: string[] = [];
      const turn = client.prompt({ sessionId: 's', prompt: TEXT }, { onUpdate: (update) => seen.push(update.sessionUpdate) });
      const iterated: string[] = [];
      for await (const update of turn) iterated.push(update.sessionUpdate);
      const result = await turn;
      expect(result).to.deep.include({ version: 2, stopReason: 'max_tokens', messageId: 'm1' });
      expect(turn.messageId).to.equal('m1');
      expect(seen).to.deep.equal(['state_update', 'agent_message_chunk', 'state_update']);
      expect(iterated).to.deep.equal(seen);
    });

    it("rejects with the agent's error answer (a prompt cancelled before insertion)", async () => {
      agent.onRequest('session/prompt', () => {
        throw RpcError.requestCancelled();
      });
      const turn = client.prompt({ sessionId: 's', prompt: TEXT });
      const error = await turn.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).to.be.instanceOf(RpcError).and.to.include({ code: -32800 });
      expect(turn.isDone).to.equal(true);
    });

    it('rejects the turn and its iteration with ConnectionClosedError when the connection closes first', async () => {
      agent.onRequest('session/prompt', () => ({ messageId: 'm' }));
      const turn = client.prompt({ sessionId: 's', prompt: TEXT });
      await turn.request;
      const iteration = (async () => {
        for await (const _update of turn) {
          // no update arrives
        }
      })();
      await clientSide.close();
      const error = await turn.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(
        await iteration.then(
          () => undefined,
          (reason: unknown) => reason,
        ),
      ).to.equal(error);
    });
  });

  describe('#cancelSession()', () => {
    it('sends the session/cancel notification, with _meta when given', async () => {
      const received: unknown[] = [];
      agent.onNotification('session/cancel', (params) => received.push(params));
      client.cancelSession('s1');
      client.cancelSession('s2', { reason: 'user' });
      await flushClientToAgent();
      expect(received).to.deep.equal([{ sessionId: 's1' }, { sessionId: 's2', _meta: { reason: 'user' } }]);
    });

    it('throws ConnectionClosedError once the connection is closed', async () => {
      await clientSide.close();
      expect(() => client.cancelSession('s')).to.throw(ConnectionClosedError);
    });
  });

  describe('#onSessionUpdate()', () => {
    it('delivers every session/update to every handler, in order', async () => {
      const seen: string[] = [];
      client.onSessionUpdate(({ sessionId }) => seen.push(`a:${sessionId}`));
      client.onSessionUpdate(({ sessionId }) => seen.push(`b:${sessionId}`));
      agent.sendNotification('session/update', UPDATE('s1'));
      agent.sendNotification('session/update', UPDATE('s2'));
      await flushAgentToClient();
      expect(seen).to.deep.equal(['a:s1', 'b:s1', 'a:s2', 'b:s2']);
    });

    it('delivers only the updates of the session given as sessionId', async () => {
      const seen: string[] = [];
      client.onSessionUpdate(({ sessionId }) => seen.push(sessionId), { sessionId: 's2' });
      agent.sendNotification('session/update', UPDATE('s1'));
      agent.sendNotification('session/update', UPDATE('s2'));
      await flushAgentToClient();
      expect(seen).to.deep.equal(['s2']);
    });

    it("stops delivering once disposed, and releases the connection's handler after the last one", async () => {
      const seen: string[] = [];
      const unclaimed: string[] = [];
      clientSide.onAnyNotification((_params, message) => unclaimed.push(message.method));
      const first = client.onSessionUpdate(() => seen.push('first'));
      const second = client.onSessionUpdate(() => seen.push('second'));
      first.dispose();
      agent.sendNotification('session/update', UPDATE('s'));
      await flushAgentToClient();
      second[Symbol.dispose]();
      agent.sendNotification('session/update', UPDATE('s'));
      await flushAgentToClient();
      expect({ seen, unclaimed }).to.deep.equal({ seen: ['second'], unclaimed: ['session/update'] });
    });

    it('runs the other handlers when one throws, and reports the error on the connection', async () => {
      const seen: string[] = [];
      client.onSessionUpdate(() => {
        throw new Error('handler failed');
      });
      client.onSessionUpdate(() => seen.push('second'));
      const reported = nextEvent<[AcpWireError]>(clientSide, 'warning');
      agent.sendNotification('session/update', UPDATE('s'));
      const [error] = await reported;
      expect(seen).to.deep.equal(['second']);
      expect(error).to.be.instanceOf(NotificationHandlerError);
      expect((error.cause as Error).message).to.equal('handler failed');
    });

    it('reports a malformed session/update on the connection instead of delivering it', async () => {
      const seen: unknown[] = [];
      client.onSessionUpdate((params) => seen.push(params));
      const reported = nextEvent<[AcpWireError]>(clientSide, 'warning');
      agent.sendNotification('session/update', { sessionId: 's' });
      const [error] = await reported;
      expect(error).to.be.instanceOf(NotificationHandlerError);
      expect(seen).to.deep.equal([]);
    });

    it('throws TypeError when the handler is not a function', () => {
      expect(() => client.onSessionUpdate('no' as unknown as () => void)).to.throw(TypeError, 'handler must be a function');
    });
  });
});
