/**
 * What `AcpAgent` advertises and serves beyond the session baseline: capabilities derived from its
 * handlers and store (it never promises a method it cannot serve), `session/delete`,
 * authentication, config options, v1 modes, and v2's `tool_call/cancel` and `terminal/cancel`, each
 * only in the versions whose schema has it.
 */
import { expect } from 'chai';
import { ErrorCode, MemorySessionStore, RpcError, type SessionStore } from '../../../lib';
import { AgentUnderTest } from '../../helpers/baseline';

/** A store that cannot delete. */
function storeWithoutDelete(): SessionStore {
  const store = new MemorySessionStore();
  return {
    create: (s) => store.create(s),
    get: (id) => store.get(id),
    update: (id, changes) => store.update(id, changes),
    list: (query) => store.list(query),
    append: (id, message) => store.append(id, message),
    history: (id) => store.history(id),
  };
}

const CONFIG = [
  {
    type: 'select',
    configId: 'mode',
    name: 'Mode',
    currentValue: 'fast',
    options: [
      { value: 'fast', name: 'Fast' },
      { value: 'slow', name: 'Slow' },
    ],
  },
];

describe('AcpAgent capabilities and optional methods', () => {
  let under: AgentUnderTest;
  afterEach(() => under.close());

  describe('capabilities', () => {
    it('v2: without capabilities in the initialize answer, advertises the session baseline with delete and additionalDirectories', async () => {
      under = new AgentUnderTest();
      expect((await under.initialize()).capabilities).to.deep.equal({ session: { delete: {}, additionalDirectories: {} } });
    });

    it('v2: with capabilities in the answer, advertises the session baseline with those, and session.delete only with a store that deletes', async () => {
      under = new AgentUnderTest({ initialize: () => ({ capabilities: { session: { prompt: { image: {} }, delete: {} } } }) });
      expect((await under.initialize()).capabilities).to.deep.equal({ session: { prompt: { image: {} }, delete: {} } });
      await under.close();
      under = new AgentUnderTest({ initialize: () => ({ capabilities: {} }) });
      expect((await under.initialize()).capabilities).to.deep.equal({ session: {} });
      const other = new AgentUnderTest({
        sessions: storeWithoutDelete(),
        initialize: () => ({ capabilities: { session: { delete: {} } } }),
      });
      try {
        expect((await other.initialize()).capabilities).to.deep.equal({ session: {} });
        expect(await other.errorCode('session/delete', { sessionId: 'x' })).to.equal(ErrorCode.MethodNotFound);
      } finally {
        await other.close();
      }
    });

    it('v1: without capabilities in the initialize answer, advertises everything it serves', async () => {
      under = new AgentUnderTest({ authenticate: () => undefined });
      expect((await under.initialize(1)).agentCapabilities).to.deep.equal({
        loadSession: true,
        sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {}, additionalDirectories: {} },
        auth: { logout: {} },
      });
    });

    it('v1: advertises what the handler lists, without sessionCapabilities.delete or auth.logout it cannot serve', async () => {
      under = new AgentUnderTest({
        sessions: storeWithoutDelete(),
        initialize: () => ({ capabilities: { loadSession: true, sessionCapabilities: { list: {}, delete: {} }, auth: { logout: {} } } }),
      });
      expect((await under.initialize(1)).agentCapabilities).to.deep.equal({
        loadSession: true,
        sessionCapabilities: { list: {} },
        auth: {},
      });
    });

    it('leaves authMethods out without an authenticate handler, and keeps them with one', async () => {
      const methods = [{ methodId: 'key', name: 'API key', type: 'agent' }];
      under = new AgentUnderTest({ initialize: () => ({ authMethods: methods }) });
      expect(await under.initialize()).to.not.have.property('authMethods');
      const other = new AgentUnderTest({ initialize: () => ({ authMethods: methods }), authenticate: () => undefined });
      try {
        expect((await other.initialize()).authMethods).to.deep.equal(methods);
      } finally {
        await other.close();
      }
    });
  });

  describe('session/delete', () => {
    it('forgets a session (no longer listed, no longer resumable), closes it if open, and succeeds for an unknown one', async () => {
      under = new AgentUnderTest();
      await under.initialize();
      const sessionId = await under.newSession();
      expect(await under.result('session/delete', { sessionId })).to.deep.equal({});
      expect(await under.result('session/list')).to.deep.equal({ sessions: [] });
      expect(await under.errorCode('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] })).to.equal(
        ErrorCode.ResourceNotFound,
      );
      expect(await under.errorCode('session/resume', { sessionId, cwd: '/work' })).to.equal(ErrorCode.ResourceNotFound);
      expect(await under.result('session/delete', { sessionId: 'never-made' })).to.deep.equal({});
    });
  });

  describe('authentication', () => {
    it('v2 auth/login and v1 authenticate call authenticate with the methodId; auth/logout answers {} by default', async () => {
      const seen: string[] = [];
      under = new AgentUnderTest({ authenticate: ({ methodId }, { version }) => void seen.push(`v${version} ${methodId}`) });
      await under.initialize();
      expect(await under.result('auth/login', { methodId: 'key' })).to.deep.equal({});
      expect(await under.result('auth/logout', {})).to.deep.equal({});
      expect(await under.errorCode('authenticate', { methodId: 'key' })).to.equal(ErrorCode.MethodNotFound);
      const v1 = new AgentUnderTest({ authenticate: ({ methodId }, { version }) => void seen.push(`v${version} ${methodId}`) });
      try {
        await v1.initialize(1);
        expect(await v1.result('authenticate', { methodId: 'other' })).to.deep.equal({});
        expect(await v1.errorCode('auth/login', { methodId: 'other' })).to.equal(ErrorCode.MethodNotFound);
      } finally {
        await v1.close();
      }
      expect(seen).to.deep.equal(['v2 key', 'v1 other']);
    });

    it('answers -32601 for auth/login and auth/logout without an authenticate handler, and the handler’s error as is', async () => {
      under = new AgentUnderTest();
      await under.initialize();
      expect(await under.errorCode('auth/login', { methodId: 'key' })).to.equal(ErrorCode.MethodNotFound);
      expect(await under.errorCode('auth/logout', {})).to.equal(ErrorCode.MethodNotFound);
      const failing = new AgentUnderTest({
        authenticate: () => {
          throw new RpcError(-32000, 'Authentication required');
        },
      });
      try {
        await failing.initialize();
        expect(await failing.errorCode('auth/login', { methodId: 'key' })).to.equal(-32000);
      } finally {
        await failing.close();
      }
    });
  });

  describe('session/set_config_option and v1 session/set_mode', () => {
    it('answers the handler’s whole list as configOptions, -32002 for a session not open, -32601 without a handler', async () => {
      const calls: unknown[] = [];
      under = new AgentUnderTest({
        newSession: () => ({ configOptions: CONFIG }),
        setConfigOption: ({ sessionId, configId, value }) => {
          calls.push({ sessionId, configId, value });
          return [{ ...CONFIG[0]!, currentValue: value as string }];
        },
      });
      await under.initialize();
      const sessionId = await under.newSession();
      const answer = await under.result('session/set_config_option', { sessionId, configId: 'mode', type: 'id', value: 'slow' });
      expect(answer).to.deep.equal({ configOptions: [{ ...CONFIG[0], currentValue: 'slow' }] });
      expect(calls).to.deep.equal([{ sessionId, configId: 'mode', value: 'slow' }]);
      expect(
        await under.errorCode('session/set_config_option', { sessionId: 'nope', configId: 'mode', type: 'id', value: 'slow' }),
      ).to.equal(ErrorCode.ResourceNotFound);
      const bare = new AgentUnderTest();
      try {
        await bare.initialize();
        const id = await bare.newSession();
        expect(await bare.errorCode('session/set_config_option', { sessionId: id, configId: 'mode', type: 'id', value: 'x' })).to.equal(
          ErrorCode.MethodNotFound,
        );
      } finally {
        await bare.close();
      }
    });

    it('serves session/set_mode in v1 only', async () => {
      under = new AgentUnderTest({ setMode: ({ modeId }) => ({ _meta: { mode: modeId } }) });
      await under.initialize(1);
      const sessionId = await under.newSession();
      expect(await under.result('session/set_mode', { sessionId, modeId: 'ask' })).to.deep.equal({ _meta: { mode: 'ask' } });
      const v2 = new AgentUnderTest({ setMode: () => ({}) });
      try {
        await v2.initialize(2);
        const id = await v2.newSession();
        expect(await v2.errorCode('session/set_mode', { sessionId: id, modeId: 'ask' })).to.equal(ErrorCode.MethodNotFound);
      } finally {
        await v2.close();
      }
    });
  });

  describe('v2 tool_call/cancel and terminal/cancel', () => {
    it('answer -32602 without a handler (nothing is cancellable), and call the handler with the ids', async () => {
      under = new AgentUnderTest();
      await under.initialize();
      const sessionId = await under.newSession();
      expect(await under.errorCode('tool_call/cancel', { sessionId, toolCallId: 't1' })).to.equal(ErrorCode.InvalidParams);
      expect(await under.errorCode('terminal/cancel', { sessionId, terminalId: 'x1' })).to.equal(ErrorCode.InvalidParams);
      const seen: string[] = [];
      const other = new AgentUnderTest({
        cancelToolCall: ({ toolCallId }) => void seen.push(toolCallId),
        cancelTerminal: ({ terminalId }) => void seen.push(terminalId),
      });
      try {
        await other.initialize();
        const id = await other.newSession();
        expect(await other.result('tool_call/cancel', { sessionId: id, toolCallId: 't1' })).to.deep.equal({});
        expect(await other.result('terminal/cancel', { sessionId: id, terminalId: 'x1' })).to.deep.equal({});
        expect(seen).to.deep.equal(['t1', 'x1']);
      } finally {
        await other.close();
      }
    });
  });
});
