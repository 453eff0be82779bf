import { expect } from 'chai';
import {
  AcpAgent,
  RpcError,
  createConnectionPair,
  negotiatedVersion,
  type AcpAgentOptions,
  type AgentTurn,
  type Connection,
} from '../../lib';
import { closeAll } from '../helpers/events';

const INFO = { name: 'spec-agent', version: '1.2.3' };
const TEXT = [{ type: 'text', text: 'hi' }];

/** The notifications the agent sent, as lines in order; `until(test)` resolves once one passes `test`. */
function recordLines(connection: Connection): { lines: string[]; until(test: (line: string) => boolean): Promise<void> } {
  const lines: string[] = [];
  let waiter: { test: (line: string) => boolean; resolve: () => void } | undefined;
  connection.onAnyNotification((_params, message) => {
    const line = JSON.stringify(message);
    lines.push(line);
    if (waiter?.test(line)) waiter.resolve();
  });
  return { lines, until: (test) => (lines.some(test) ? Promise.resolve() : new Promise((resolve) => (waiter = { test, resolve }))) };
}

describe('AcpAgent', () => {
  let client: Connection;
  let agentSide: Connection;

  beforeEach(() => {
    [client, agentSide] = createConnectionPair();
  });

  afterEach(() => closeAll(client, agentSide));

  function serve(options: Partial<AcpAgentOptions> = {}): AcpAgent {
    return new AcpAgent(agentSide, { info: INFO, prompt: () => 'end_turn', ...options });
  }

  /** The agent's answer to one request, as `{result}` or `{error}`. */
  function call(method: string, params?: unknown): Promise<{ result?: unknown; error?: unknown }> {
    return client.sendRequest(method, params).then(
      (result) => ({ result }),
      (error: unknown) => ({ error: error instanceof RpcError ? error.toJSON() : error }),
    );
  }

  /** Resolves once every message the agent sent before it has been dispatched on the client side. */
  async function flushAgentToClient(): Promise<void> {
    client.onRequest('_sync', () => null);
    await agentSide.sendRequest('_sync');
  }

  describe('constructor', () => {
    it('throws TypeError without info or prompt, and RangeError for empty protocolVersions', () => {
      expect(() => new AcpAgent(agentSide, { prompt: () => undefined } as unknown as AcpAgentOptions)).to.throw(TypeError, 'info');
      expect(() => new AcpAgent(agentSide, { info: INFO } as unknown as AcpAgentOptions)).to.throw(TypeError, 'prompt');
      expect(() => new AcpAgent(agentSide, { info: INFO, prompt: () => undefined, protocolVersions: [] })).to.throw(RangeError);
    });
  });

  describe('initialize', () => {
    it('answers a requested 2 in the v2 shape, advertising the session baseline, session/delete and additionalDirectories, and keeps the version on the connection', async () => {
      const agent = serve();
      expect(await call('initialize', { protocolVersion: 2, info: { name: 'c', version: '1' } })).to.deep.equal({
        result: { protocolVersion: 2, info: INFO, capabilities: { session: { delete: {}, additionalDirectories: {} } } },
      });
      expect(agent.protocolVersion).to.equal(2);
      expect(negotiatedVersion(agentSide)).to.equal(2);
      expect(agent.client).to.deep.include({ version: 2, requestedVersion: 2, clientInfo: { name: 'c', version: '1' } });
    });

    it("answers a requested 1 in the v1 shape, with the client's clientInfo and clientCapabilities", async () => {
      const agent = serve({ initialize: () => ({ capabilities: { loadSession: false } }) });
      const clientCapabilities = { fs: { readTextFile: true, writeTextFile: false }, terminal: true };
      expect(await call('initialize', { protocolVersion: 1, clientInfo: { name: 'c', version: '1' }, clientCapabilities })).to.deep.equal({
        result: { protocolVersion: 1, agentInfo: INFO, agentCapabilities: { loadSession: false }, authMethods: [] },
      });
      expect(agent.client).to.deep.include({ version: 1, clientInfo: { name: 'c', version: '1' }, clientCapabilities });
    });

    it('answers a higher requested version with its highest, and -32022 {requested, supported} below its lowest', async () => {
      serve({ protocolVersions: [2] });
      expect(await call('initialize', { protocolVersion: 1 })).to.deep.equal({
        error: { code: -32022, message: 'Unsupported protocol version', data: { requested: 1, supported: [2] } },
      });
      expect((await call('initialize', { protocolVersion: 9 })).result).to.deep.include({ protocolVersion: 2 });
    });

    it('answers -32602 for a protocolVersion that is not an integer from 0 to 65535, and stays uninitialized', async () => {
      serve();
      const invalid = { error: { code: -32602, message: 'Invalid params', data: '`protocolVersion` must be an integer from 0 to 65535' } };
      expect(await call('initialize', {})).to.deep.equal(invalid);
      expect(await call('initialize', { protocolVersion: 1.5 })).to.deep.equal(invalid);
      expect(await call('initialize', { protocolVersion: 70_000 })).to.deep.equal(invalid);
      expect((await call('session/new', { cwd: '/' })).error).to.deep.include({ code: -32600 });
    });

    it('lets a failed initialize be retried, and refuses a second one once ready', async () => {
      let calls = 0;
      serve({
        initialize: () => {
          if (++calls === 1) throw new RpcError(-32000, 'Authentication required');
          return {};
        },
      });
      expect(await call('initialize', { protocolVersion: 2 })).to.deep.equal({
        error: { code: -32000, message: 'Authentication required' },
      });
      expect(negotiatedVersion(agentSide)).to.equal(undefined);
      expect((await call('initialize', { protocolVersion: 2 })).result).to.deep.include({ protocolVersion: 2 });
      expect((await call('initialize', { protocolVersion: 1 })).error).to.deep.include({
        code: -32600,
        data: 'the connection is already initialized',
      });
    });
  });

  describe('sessions and prompts', () => {
    async function initialized(
      version: 1 | 2,
      options: Partial<AcpAgentOptions> = {},
    ): Promise<{ sessionId: string } & ReturnType<typeof recordLines>> {
      serve(options);
      await call('initialize', { protocolVersion: version });
      const { sessionId } = (await call('session/new', { cwd: '/tmp', mcpServers: [] })).result as { sessionId: string };
      return { sessionId, ...recordLines(client) };
    }

    it("answers session/new with the handler's fields and a generated sessionId, -32602 without a cwd", async () => {
      serve({ newSession: () => ({ modes: null }) });
      await call('initialize', { protocolVersion: 2 });
      const { result } = await call('session/new', { cwd: '/tmp' });
      expect(result).to.have.property('modes', null);
      expect((result as { sessionId: string }).sessionId).to.match(/^[0-9a-f-]{36}$/);
      expect(await call('session/new', {})).to.deep.equal({
        error: { code: -32602, message: 'Invalid params', data: '`cwd` must be a string' },
      });
    });

    it('answers -32002 for an unknown session and -32602 for an empty prompt', async () => {
      const { sessionId } = await initialized(2);
      expect(await call('session/prompt', { sessionId: 'nope', prompt: TEXT })).to.deep.equal({
        error: { code: -32002, message: 'Resource not found', data: { sessionId: 'nope' } },
      });
      expect((await call('session/prompt', { sessionId, prompt: [] })).error).to.deep.include({ code: -32602 });
    });

    it("v2: answers {messageId}, then user_message, running, the turn's updates and idle with its stop reason", async () => {
      const { sessionId, lines } = await initialized(2, {
        prompt: (turn) => {
          turn.sendText('a');
          return 'max_tokens';
        },
      });
      const { result } = await call('session/prompt', { sessionId, prompt: TEXT });
      await flushAgentToClient();
      const { messageId } = result as { messageId: string };
      const updates = lines.map((line) => (JSON.parse(line) as { params: { update: Record<string, unknown> } }).params.update);
      expect(updates).to.have.length(4);
      expect(updates[0]).to.deep.equal({ sessionUpdate: 'user_message', messageId, content: TEXT });
      expect(updates[1]).to.deep.equal({ sessionUpdate: 'state_update', state: 'running' });
      expect(updates[2]).to.deep.include({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a' } });
      expect(updates[2]!.messageId).to.be.a('string').and.not.equal(messageId);
      expect(updates[3]).to.deep.equal({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'max_tokens' });
    });

    it('v2: a turn that throws ends idle with stopReason "error" and the error', async () => {
      const { sessionId, lines } = await initialized(2, {
        prompt: () => {
          throw new RpcError(-32001, 'model failed', { retry: false });
        },
      });
      await call('session/prompt', { sessionId, prompt: TEXT });
      await flushAgentToClient();
      expect(JSON.parse(lines[lines.length - 1]!)).to.deep.include({
        params: {
          sessionId,
          update: {
            sessionUpdate: 'state_update',
            state: 'idle',
            stopReason: 'error',
            error: { code: -32001, message: 'model failed', data: { retry: false } },
          },
        },
      });
    });

    it('v2: session/cancel aborts the turn\'s signal and the turn ends idle "cancelled", whatever the handler returns', async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const { sessionId, lines, until } = await initialized(2, {
        prompt: (turn) =>
          new Promise((resolve) => {
            turn.signal.addEventListener('abort', () => resolve('end_turn'));
            started();
          }),
      });
      await call('session/prompt', { sessionId, prompt: TEXT });
      await running;
      client.sendNotification('session/cancel', { sessionId });
      await until((line) => line.includes('"idle"'));
      const updates = lines.map((line) => (JSON.parse(line) as { params: { update: Record<string, unknown> } }).params.update);
      expect(updates.map((update) => update.sessionUpdate)).to.deep.equal(['user_message', 'state_update', 'state_update']);
      expect(updates[2]).to.deep.equal({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' });
    });

    it('v1: answers the prompt at the end of the turn, after its updates', async () => {
      const { sessionId, lines } = await initialized(1, {
        prompt: (turn) => {
          turn.sendText('a');
          turn.sendText('b');
          return undefined;
        },
      });
      expect(await call('session/prompt', { sessionId, prompt: TEXT })).to.deep.equal({ result: { stopReason: 'end_turn' } });
      expect(lines.map((line) => JSON.parse(line) as { params: unknown })).to.deep.equal([
        {
          jsonrpc: '2.0',
          method: 'session/update',
          params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a' } } },
        },
        {
          jsonrpc: '2.0',
          method: 'session/update',
          params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'b' } } },
        },
      ]);
    });

    it('v1: session/cancel ends the turn {stopReason: "cancelled"}; $/cancel_request answers -32800', async () => {
      const turns: AgentTurn[] = [];
      const { sessionId } = await initialized(1, {
        prompt: (turn) => {
          turns.push(turn);
          return new Promise<undefined>((resolve) => turn.signal.addEventListener('abort', () => resolve(undefined)));
        },
      });
      const first = call('session/prompt', { sessionId, prompt: TEXT });
      client.sendNotification('session/cancel', { sessionId });
      expect(await first).to.deep.equal({ result: { stopReason: 'cancelled' } });
      const second = client.sendRequest('session/prompt', { sessionId, prompt: TEXT });
      second.cancel();
      const error = await second.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).to.be.instanceOf(RpcError).and.to.include({ code: -32800 });
      expect(turns.map((turn) => turn.isCancelled)).to.deep.equal([true, true]);
    });

    it('v1: a turn that throws answers the prompt with its error', async () => {
      const { sessionId } = await initialized(1, {
        prompt: () => {
          throw new RpcError(-32001, 'model failed');
        },
      });
      expect(await call('session/prompt', { sessionId, prompt: TEXT })).to.deep.equal({ error: { code: -32001, message: 'model failed' } });
    });

    it('admitPrompt: a throw refuses the prompt, and a cancel while it holds the prompt answers -32800 (v2)', async () => {
      const { sessionId } = await initialized(2, {
        admitPrompt: (request, { signal }) => {
          if ((request.params._meta as { refuse?: boolean } | undefined)?.refuse) throw RpcError.invalidParams('refused');
          return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        },
      });
      expect(await call('session/prompt', { sessionId, prompt: TEXT, _meta: { refuse: true } })).to.deep.equal({
        error: { code: -32602, message: 'Invalid params', data: 'refused' },
      });
      const held = call('session/prompt', { sessionId, prompt: TEXT });
      client.sendNotification('session/cancel', { sessionId });
      expect(await held).to.deep.equal({ error: { code: -32800, message: 'Request cancelled' } });
    });

    it("calls onCancelSession with every session/cancel's params", async () => {
      const seen: unknown[] = [];
      await initialized(2, { onCancelSession: (params) => seen.push(params) });
      client.sendNotification('session/cancel', { sessionId: 'any' });
      client.sendNotification('session/cancel');
      await call('_unknown');
      expect(seen).to.deep.equal([{ sessionId: 'any' }, undefined]);
    });
  });
});
