import { expect } from 'chai';
import {
  AcpClient,
  ConnectionClosedError,
  NotificationHandlerError,
  RpcError,
  createConnectionPair,
  type AcpWireError,
  type Connection,
  type SessionUpdateParams,
} from '../../lib';
import { CONFORMANCE_AGENT_NAME, serveConformanceAgent } from '../../examples/conformance-agent';
import { closeAll, nextEvent } from '../helpers/events';

const UPDATE = (sessionId: string, sessionUpdate = 'state_update'): SessionUpdateParams => ({
  sessionId,
  update: { sessionUpdate, state: 'running' },
});

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

  describe('constructor', () => {
    it('throws TypeError without a connection', () => {
      expect(() => new AcpClient(undefined as unknown as Connection)).to.throw(TypeError, 'connection must be a Connection');
    });
  });

  describe('#initialize()', () => {
    it('sends protocol version 2, a client info and empty capabilities by default', async () => {
      let received: unknown;
      agent.onRequest('initialize', (params) => ((received = params), { protocolVersion: 2 }));
      await client.initialize();
      expect(received).to.deep.equal({ protocolVersion: 2, info: { name: 'acp-wire-client', version: 'unspecified' }, capabilities: {} });
    });

    it('fills in only the missing fields and passes the others through', async () => {
      let received: unknown;
      agent.onRequest('initialize', (params) => ((received = params), { protocolVersion: 2 }));
      await client.initialize({ info: { name: 'editor', version: '3.1' }, _meta: { trace: true } });
      expect(received).to.deep.equal({ protocolVersion: 2, info: { name: 'editor', version: '3.1' }, capabilities: {}, _meta: { trace: true } });
    });

    it('resolves with the agent result and keeps it as initializeResult', async () => {
      const result = { protocolVersion: 2, info: { name: 'a', version: '1' }, capabilities: { session: {} } };
      agent.onRequest('initialize', () => result);
      expect(client.initializeResult).to.equal(undefined);
      expect(await client.initialize()).to.deep.equal(result);
      expect(client.initializeResult).to.deep.equal(result);
    });

    it('rejects with the agent\'s RpcError and keeps the previous result', async () => {
      let calls = 0;
      agent.onRequest('initialize', () => {
        if (++calls === 1) return { protocolVersion: 2, first: true };
        throw new RpcError(-32603, 'Internal error', 'nope');
      });
      await client.initialize();
      const error = await client.initialize().then(() => undefined, (reason: unknown) => reason);
      expect(error).to.be.instanceOf(RpcError).and.to.include({ code: -32603, data: 'nope' });
      expect(client.initializeResult).to.deep.equal({ protocolVersion: 2, first: true });
    });
  });

  describe('#newSession()', () => {
    it('sends session/new with the params and resolves with the result', async () => {
      agent.onRequest('session/new', (params: { cwd: string }) => ({ sessionId: `s-${params.cwd}` }));
      expect(await client.newSession({ cwd: '/work', mcpServers: [] })).to.deep.equal({ sessionId: 's-/work' });
    });
  });

  describe('#prompt()', () => {
    it('sends session/prompt and resolves with {messageId}', async () => {
      agent.onRequest('session/prompt', (params: { sessionId: string }) => ({ messageId: `m-${params.sessionId}` }));
      expect(await client.prompt({ sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] })).to.deep.equal({ messageId: 'm-s' });
    });

    it('sends one $/cancel_request for this request when the signal aborts', async () => {
      const cancels: unknown[] = [];
      agent.onNotification('$/cancel_request', (params) => cancels.push(params));
      agent.onRequest('session/prompt', (_params, responder) => {
        responder.signal.addEventListener('abort', () => responder.respondCancelled());
      });
      const controller = new AbortController();
      const sent = client.prompt({ sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] }, { signal: controller.signal });
      controller.abort();
      controller.abort();
      const error = await sent.then(() => undefined, (reason: unknown) => reason);
      expect(error).to.be.instanceOf(RpcError).and.to.include({ code: -32800 });
      expect(cancels).to.deep.equal([{ requestId: sent.id }]);
    });
  });

  describe('#cancelSession()', () => {
    it('sends the session/cancel notification, with _meta when given', async () => {
      const received: unknown[] = [];
      agent.onNotification('session/cancel', (params) => received.push(params));
      agent.onRequest('_sync', () => null);
      client.cancelSession('s1');
      client.cancelSession('s2', { reason: 'user' });
      await clientSide.sendRequest('_sync');
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

    it('stops delivering once disposed, and releases the connection\'s handler after the last one', async () => {
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

  describe('with the conformance agent', () => {
    it('initializes, prompts and sees the turn end cancelled after cancelSession()', async () => {
      serveConformanceAgent(agent, { version: '9.9.9' });
      const init = await client.initialize();
      expect(init).to.deep.equal({ protocolVersion: 2, info: { name: CONFORMANCE_AGENT_NAME, version: '9.9.9' }, capabilities: { session: {} } });
      const { sessionId } = await client.newSession({ cwd: '/tmp', mcpServers: [] });
      const kinds: string[] = [];
      const idle = new Promise<void>((resolve) => {
        client.onSessionUpdate(
          ({ update }) => {
            kinds.push(`${update.sessionUpdate}${update.stopReason ? ` ${String(update.stopReason)}` : ''}`);
            if (update.sessionUpdate === 'agent_message_chunk') client.cancelSession(sessionId);
            if (update.stopReason) resolve();
          },
          { sessionId },
        );
      });
      const { messageId } = await client.prompt({ sessionId, prompt: [{ type: 'text', text: 'go' }], _meta: { workMs: 60_000 } });
      await idle;
      expect(messageId).to.match(/^[0-9a-f-]{36}$/);
      expect(kinds).to.deep.equal(['user_message', 'state_update', 'agent_message_chunk', 'state_update cancelled']);
    });
  });
});
