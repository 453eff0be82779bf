/**
 * The official ACP SDK's v2 client (`@agentclientprotocol/sdk/experimental/v2`, 2.4) driving the
 * session baseline of an agent written with `AcpAgent`: `session/list`, `session/resume` and
 * `session/close`, in process and through `acp-wire conduct` with two passthrough proxies (the
 * quickstart agent as the last hop); and `AcpClient`'s methods for the same.
 */
import * as acp from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { PassThrough, Readable, Writable } from 'node:stream';
import { AcpAgent, AcpClient, Connection, createConnectionPair, type AgentTurn } from '../../../lib';
import { PASSTHROUGH_COMMAND } from '../../helpers/chain';
import { CLI, ROOT, useBuild } from '../../helpers/processes';
import { echo } from '../../helpers/baseline';

type SdkStream = Parameters<acp.ClientApp['connectWith']>[0];

/** What the SDK client saw of list, resume and close. */
interface Outcome {
  listed: string[];
  filtered: number;
  resumed: unknown;
  closed: unknown;
  /** A second close: the agent answers -32002, which the SDK takes as an idempotent success. */
  closedAgain: unknown;
}

/** Initializes, makes a session, lists, resumes and closes it with the SDK's v2 client. */
async function listResumeClose(ctx: acp.ClientContext, cwd: string): Promise<Outcome> {
  await ctx.request(acp.methods.agent.initialize, { protocolVersion: 2, info: { name: 'sdk', version: '2' } });
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const list = await ctx.request(acp.methods.agent.session.list, {});
  const filtered = await ctx.request(acp.methods.agent.session.list, { cwd: '/no/such/dir' });
  const resumed = await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd });
  const closed = await ctx.request(acp.methods.agent.session.close, { sessionId });
  const closedAgain = await ctx.request(acp.methods.agent.session.close, { sessionId });
  return { listed: list.sessions.map((s) => s.sessionId), filtered: filtered.sessions.length, resumed, closed, closedAgain };
}

describe("the official SDK's v2 client and AcpAgent's session baseline", () => {
  it('lists, resumes and closes a session of AcpAgent in process', async () => {
    const toSdk = new PassThrough();
    const toAgent = new PassThrough();
    const connection = new Connection(toAgent, toSdk);
    new AcpAgent(connection, { info: { name: 'agent', version: '1' }, prompt: echo });
    const stream = acp.ndJsonStream(
      Writable.toWeb(toAgent) as WritableStream<Uint8Array>,
      Readable.toWeb(toSdk) as ReadableStream<Uint8Array>,
    );
    try {
      const outcome = await acp.client({ name: 'sdk-client' }).connectWith(stream as SdkStream, (ctx) => listResumeClose(ctx, '/tmp'));
      expect(outcome.listed).to.have.length(1);
      expect(outcome).to.deep.include({ filtered: 0, resumed: {}, closed: {}, closedAgain: {} });
    } finally {
      await connection.close();
    }
  });

  describe('through acp-wire conduct with two passthrough proxies and the quickstart agent', () => {
    useBuild();

    it('lists, resumes and closes a session', async () => {
      const agent = `node ${ROOT}/dist/examples/quickstart-agent.js`;
      const child = spawn(process.execPath, [CLI, 'conduct', PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, agent], {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const stream = acp.ndJsonStream(
        Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
      );
      try {
        const outcome = await acp.client({ name: 'sdk-client' }).connectWith(stream as SdkStream, (ctx) => listResumeClose(ctx, ROOT));
        expect(outcome.listed).to.have.length(1);
        expect(outcome).to.deep.include({ filtered: 0, resumed: {}, closed: {}, closedAgain: {} });
      } finally {
        child.stdin.end();
        expect(await exited).to.equal(0);
      }
    });
  });
});

describe('AcpClient and the session baseline', () => {
  const closing: Connection[] = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((c) => c.close()));
  });

  function clientOf(prompt: (turn: AgentTurn) => unknown = echo): AcpClient {
    const [clientSide, agentSide] = createConnectionPair();
    closing.push(clientSide, agentSide);
    new AcpAgent(agentSide, {
      info: { name: 'agent', version: '1' },
      prompt: prompt as never,
      setConfigOption: ({ value }) => [{ type: 'select', configId: 'mode', name: 'Mode', currentValue: value as string, options: [] }],
    });
    return new AcpClient(clientSide);
  }

  it('listSessions, resumeSession with replay, setConfigOption, closeSession and deleteSession', async () => {
    const client = clientOf();
    await client.initialize();
    const { sessionId } = await client.newSession({ cwd: '/work' });
    await client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect((await client.listSessions()).sessions.map((s) => s.sessionId)).to.deep.equal([sessionId]);
    const replayed: string[] = [];
    const subscription = client.onSessionUpdate((params) => replayed.push(params.update.sessionUpdate), { sessionId });
    expect(await client.resumeSession({ sessionId, cwd: '/work', replayFrom: { type: 'start' } })).to.deep.equal({});
    subscription.dispose();
    expect(replayed).to.deep.equal(['user_message', 'agent_message', 'state_update']);
    const { configOptions } = await client.setConfigOption({ sessionId, configId: 'mode', type: 'id', value: 'slow' });
    expect(configOptions.map((o) => (o as { currentValue?: unknown }).currentValue)).to.deep.equal(['slow']);
    expect(await client.closeSession(sessionId)).to.deep.equal({});
    expect(await client.deleteSession(sessionId)).to.deep.equal({});
    expect((await client.listSessions()).sessions).to.deep.equal([]);
  });

  it('loadSession replays a v1 conversation', async () => {
    const client = clientOf();
    await client.initialize({ protocolVersion: 1 });
    const { sessionId } = await client.newSession({ cwd: '/work' });
    await client.prompt({ sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    const replayed: string[] = [];
    const subscription = client.onSessionUpdate((params) => replayed.push(params.update.sessionUpdate), { sessionId });
    await client.loadSession({ sessionId, cwd: '/work' });
    subscription.dispose();
    expect(replayed).to.deep.equal(['user_message_chunk', 'agent_message_chunk']);
  });

  it('answers elicitation/create with its elicit handler, advertises elicitation, and hears elicitation/complete', async () => {
    const [clientSide, agentSide] = createConnectionPair();
    closing.push(clientSide, agentSide);
    const completed: unknown[] = [];
    const client = new AcpClient(clientSide, {
      handlers: {
        elicit: ({ message }) => ({ action: 'accept', content: { answer: `yes to ${message}` } }),
        onElicitationComplete: (p) => void completed.push(p),
      },
    });
    const agent = new AcpAgent(agentSide, { info: { name: 'agent', version: '1' }, prompt: echo });
    await client.initialize();
    expect(agent.client?.clientCapabilities).to.deep.equal({ elicitation: { form: {}, url: {} } });
    const answer = await agentSide.sendRequest('elicitation/create', {
      mode: 'form',
      message: 'proceed?',
      requestedSchema: { type: 'object', properties: {} },
      sessionId: 's',
    });
    expect(answer).to.deep.equal({ action: 'accept', content: { answer: 'yes to proceed?' } });
    agentSide.sendNotification('elicitation/complete', { elicitationId: 'e1' });
    // The client answers requests in arrival order: once a later request is answered, the notification was handled.
    await agentSide.sendRequest('probe').catch(() => undefined);
    expect(completed).to.deep.equal([{ elicitationId: 'e1' }]);
  });
});
