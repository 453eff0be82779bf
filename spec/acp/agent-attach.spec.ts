/**
 * AcpAgent's `attachSession`: ACP v1 `session/load` and v2 `session/resume` re-attach a session on
 * a connection that did not create it; and the conformance agent's use of it.
 */
import { expect } from 'chai';
import {
  AcpAgent,
  AcpClient,
  ErrorCode,
  RpcError,
  createConnectionPair,
  type AgentAttachSessionRequest,
  type Connection,
  type JsonObject,
} from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { rejectionOf } from '../helpers/async';
import { closeAll } from '../helpers/events';

describe('AcpAgent attachSession', () => {
  const opened: Connection[] = [];
  afterEach(async () => {
    await closeAll(...opened.splice(0));
  });

  function pair(attachSession?: (request: AgentAttachSessionRequest) => JsonObject | undefined): { client: Connection; seen: string[] } {
    const [client, agentSide] = createConnectionPair();
    opened.push(client, agentSide);
    new AcpAgent(agentSide, { info: { name: 'a', version: '1' }, prompt: (turn) => void turn.sendText('ok'), attachSession });
    const seen: string[] = [];
    client.onNotification('session/update', (params) => {
      const { update } = params as { update: { sessionUpdate: string; state?: string } };
      seen.push(`${update.sessionUpdate}${update.state ? `:${update.state}` : ''}`);
    });
    return { client, seen };
  }

  it('v1: session/load calls the handler with the session, and the session then takes prompts', async () => {
    const requests: AgentAttachSessionRequest[] = [];
    const { client } = pair((request) => (requests.push(request), {}));
    await client.sendRequest('initialize', { protocolVersion: 1 });
    expect(await client.sendRequest('session/load', { sessionId: 's1', cwd: '/w', mcpServers: [] })).to.deep.equal({});
    expect(requests.map(({ method, sessionId, cwd }) => ({ method, sessionId, cwd }))).to.deep.equal([
      { method: 'session/load', sessionId: 's1', cwd: '/w' },
    ]);
    expect(await client.sendRequest('session/prompt', { sessionId: 's1', prompt: [{ type: 'text', text: 'x' }] })).to.deep.equal({
      stopReason: 'end_turn',
    });
  });

  it('v2: session/resume sends an idle state_update before its answer', async () => {
    const { client, seen } = pair(() => ({}));
    await client.sendRequest('initialize', { protocolVersion: 2 });
    await client.sendRequest('session/resume', { sessionId: 's2', cwd: '/' });
    expect(seen).to.deep.equal(['state_update:idle']);
  });

  it('answers the handler’s RpcError (-32002 for an unknown session), and the session stays unknown', async () => {
    const { client } = pair(({ sessionId }) => {
      throw new RpcError(ErrorCode.ResourceNotFound, 'Resource not found', { sessionId });
    });
    await client.sendRequest('initialize', { protocolVersion: 2 });
    const error = await rejectionOf<RpcError>(client.sendRequest('session/resume', { sessionId: 'nope', cwd: '/' }));
    expect(error).to.be.instanceOf(RpcError).and.include({ code: ErrorCode.ResourceNotFound });
    const prompt = await rejectionOf<RpcError>(
      client.sendRequest('session/prompt', { sessionId: 'nope', prompt: [{ type: 'text', text: 'x' }] }),
    );
    expect(prompt.code).to.equal(ErrorCode.ResourceNotFound);
  });

  it('serves session/load and session/resume from its store without the handler: -32002 for a session it does not know, -32602 for bad params', async () => {
    const { client } = pair();
    await client.sendRequest('initialize', { protocolVersion: 1 });
    for (const method of ['session/load', 'session/resume']) {
      expect((await rejectionOf<RpcError>(client.sendRequest(method, { sessionId: 's', cwd: '/' }))).code).to.equal(
        ErrorCode.ResourceNotFound,
      );
    }
    const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/w', mcpServers: [] });
    expect(await client.sendRequest('session/load', { sessionId, cwd: '/w', mcpServers: [] })).to.deep.equal({});
    const { client: other } = pair(() => ({}));
    await other.sendRequest('initialize', { protocolVersion: 1 });
    expect((await rejectionOf<RpcError>(other.sendRequest('session/load', { sessionId: 1, cwd: '/' }))).code).to.equal(
      ErrorCode.InvalidParams,
    );
    expect((await rejectionOf<RpcError>(other.sendRequest('session/load', { sessionId: 's' }))).code).to.equal(ErrorCode.InvalidParams);
  });
});

describe('The conformance agent re-attaching sessions', () => {
  const opened: Connection[] = [];
  afterEach(async () => {
    await closeAll(...opened.splice(0));
  });

  function conformanceClient(): AcpClient {
    const [client, agentSide] = createConnectionPair();
    opened.push(client, agentSide);
    serveConformanceAgent(agentSide);
    return new AcpClient(client);
  }

  for (const version of [1, 2] as const) {
    it(`ACP v${version}: advertises it and re-attaches, on another connection, a session made in its process`, async () => {
      const first = conformanceClient();
      await first.initialize({ protocolVersion: version });
      const { sessionId } = await first.newSession({ cwd: '/' });
      const second = conformanceClient();
      const agent = await second.initialize({ protocolVersion: version });
      const method = version === 1 ? 'session/load' : 'session/resume';
      if (version === 1) expect(agent.capabilities).to.deep.equal({ loadSession: true });
      else expect(agent.capabilities).to.deep.equal({ session: {} });
      await second.connection.sendRequest(method, { sessionId, cwd: '/', mcpServers: [] });
      expect((await second.prompt({ sessionId, prompt: [{ type: 'text', text: 'again' }] })).stopReason).to.equal('end_turn');
      const unknown = await rejectionOf<RpcError>(
        second.connection.sendRequest(method, { sessionId: 'never-made', cwd: '/', mcpServers: [] }),
      );
      expect(unknown).to.be.instanceOf(RpcError).and.include({ code: ErrorCode.ResourceNotFound });
    });
  }
});
