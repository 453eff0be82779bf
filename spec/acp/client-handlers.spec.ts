import { expect } from 'chai';
import { AcpClient, RpcError, createConnectionPair, type AcpClientHandlers, type Connection, type TerminalHandlers } from '../../lib';
import { closeAll } from '../helpers/events';

const PERMISSION_V1 = {
  sessionId: 's',
  toolCall: { toolCallId: 't1' },
  options: [{ optionId: 'yes', name: 'Allow', kind: 'allow_once' }],
};

const TERMINAL: TerminalHandlers = {
  create: () => ({ terminalId: 'term-1' }),
  output: () => ({ output: 'ok\n', truncated: false }),
  waitForExit: () => ({ exitCode: 0 }),
  kill: () => undefined,
  release: () => undefined,
};

describe('AcpClient handlers', () => {
  let clientSide: Connection;
  let agent: Connection;

  beforeEach(() => {
    [clientSide, agent] = createConnectionPair();
  });

  afterEach(() => closeAll(clientSide, agent));

  async function initializedClient(handlers: AcpClientHandlers): Promise<{ client: AcpClient; sent: unknown }> {
    let sent: unknown;
    agent.onRequest('initialize', (params) => ((sent = params), { protocolVersion: 1 }));
    const client = new AcpClient(clientSide, { handlers });
    await client.initialize();
    return { client, sent };
  }

  it('advertises the v1 capabilities of the handlers given', async () => {
    const { sent } = await initializedClient({ fs: { readTextFile: () => ({ content: '' }) }, terminal: TERMINAL });
    expect(sent).to.deep.include({ clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: true } });
  });

  it("answers fs/read_text_file with the handler's result and fs/write_text_file with {} when it returns nothing", async () => {
    const written: unknown[] = [];
    await initializedClient({
      fs: {
        readTextFile: ({ path }, { version }) => ({ content: `${path} in v${String(version)}` }),
        writeTextFile: (params) => void written.push(params),
      },
    });
    expect(await agent.sendRequest('fs/read_text_file', { sessionId: 's', path: '/a' })).to.deep.equal({ content: '/a in v1' });
    expect(await agent.sendRequest('fs/write_text_file', { sessionId: 's', path: '/b', content: 'x' })).to.deep.equal({});
    expect(written).to.deep.equal([{ sessionId: 's', path: '/b', content: 'x' }]);
  });

  it('answers the five terminal requests', async () => {
    await initializedClient({ terminal: TERMINAL });
    const params = { sessionId: 's', terminalId: 'term-1' };
    expect(await agent.sendRequest('terminal/create', { sessionId: 's', command: 'ls' })).to.deep.equal({ terminalId: 'term-1' });
    expect(await agent.sendRequest('terminal/output', params)).to.deep.equal({ output: 'ok\n', truncated: false });
    expect(await agent.sendRequest('terminal/wait_for_exit', params)).to.deep.equal({ exitCode: 0 });
    expect(await agent.sendRequest('terminal/kill', params)).to.deep.equal({});
    expect(await agent.sendRequest('terminal/release', params)).to.deep.equal({});
  });

  it("throws TypeError for a terminal set missing a handler, and answers a handler's RpcError as is", async () => {
    const partial = { create: TERMINAL.create } as unknown as TerminalHandlers;
    expect(() => new AcpClient(clientSide).handle({ terminal: partial })).to.throw(TypeError, 'terminal.output must be a function');
    await initializedClient({ fs: { readTextFile: () => Promise.reject(new RpcError(-32002, 'Resource not found', { uri: '/x' })) } });
    const error = await agent.sendRequest('fs/read_text_file', { sessionId: 's', path: '/x' }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error)
      .to.be.instanceOf(RpcError)
      .and.to.deep.include({ code: -32002, data: { uri: '/x' } });
  });

  it('removes the handlers when the registration is disposed', async () => {
    const { client } = await initializedClient({});
    const registration = client.handle({ fs: { readTextFile: () => ({ content: 'x' }) } });
    registration.dispose();
    const error = await agent.sendRequest('fs/read_text_file', { sessionId: 's', path: '/a' }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).to.be.instanceOf(RpcError).and.to.include({ code: -32601 });
  });

  describe('requestPermission', () => {
    it("answers with the handler's outcome", async () => {
      await initializedClient({ requestPermission: () => ({ outcome: { outcome: 'selected', optionId: 'yes' } }) });
      expect(await agent.sendRequest('session/request_permission', PERMISSION_V1)).to.deep.equal({
        outcome: { outcome: 'selected', optionId: 'yes' },
      });
    });

    it("answers {outcome: cancelled} at once when the agent cancels the request, and aborts the handler's signal", async () => {
      let aborted!: () => void;
      const handlerAborted = new Promise<void>((resolve) => (aborted = resolve));
      await initializedClient({
        requestPermission: (_params, { signal }) =>
          new Promise(() => {
            signal.addEventListener('abort', () => aborted());
            asked();
          }),
      });
      let asked!: () => void;
      const isAsked = new Promise<void>((resolve) => (asked = resolve));
      const request = agent.sendRequest('session/request_permission', PERMISSION_V1);
      await isAsked;
      request.cancel();
      expect(await request).to.deep.equal({ outcome: { outcome: 'cancelled' } });
      await handlerAborted;
    });

    it("answers the session's pending permission requests {outcome: cancelled} when the client cancels its turn", async () => {
      let asked!: () => void;
      const isAsked = new Promise<void>((resolve) => (asked = resolve));
      const { client } = await initializedClient({
        requestPermission: () =>
          new Promise(() => {
            asked();
          }),
      });
      agent.onRequest('session/prompt', (params: { sessionId: string }, responder) => {
        void agent.sendRequest('session/request_permission', { ...PERMISSION_V1, sessionId: params.sessionId }).then((answer) => {
          responder.respond({ stopReason: (answer as { outcome: { outcome: string } }).outcome.outcome });
        });
      });
      const turn = client.prompt({ sessionId: 's', prompt: [{ type: 'text', text: 'rm -rf' }] });
      await isAsked;
      turn.cancel();
      expect((await turn).stopReason).to.equal('cancelled');
    });
  });
});
