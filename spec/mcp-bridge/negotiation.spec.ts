/**
 * When the bridge bridges: `acp` advertised upstream only when the agent can be given the servers,
 * an agent with native `acp` support left untouched, and every session request rewritten.
 */
import { expect } from 'chai';
import type { JsonObject } from '../../lib';
import { type BridgeChain, type FakeAgentOptions, fakeInitializeResult, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';

const ACP_TOOLS = { type: 'acp', name: 'tools', serverId: 'tools-1' };

describe('McpBridge negotiation and rewriting', function () {
  this.timeout(20000);
  useBuild();

  let chain: BridgeChain | undefined;
  afterEach(async () => {
    await chain?.close();
    chain = undefined;
  });

  async function initialize(agent: FakeAgentOptions, prefer?: 'http' | 'stdio'): Promise<JsonObject> {
    chain = startBridgeChain(agent, prefer ? { prefer } : {});
    return (await chain.client.left.sendRequest('initialize', { protocolVersion: agent.version })) as JsonObject;
  }

  it('passes everything through untouched for an agent that advertises acp itself (v1)', async () => {
    const agent = { version: 1, transports: ['http', 'acp'] } as const;
    expect(await initialize(agent)).to.deep.equal(fakeInitializeResult(agent));
    await chain!.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] });
    expect(chain!.received['session/new']).to.deep.equal([{ cwd: '/', mcpServers: [ACP_TOOLS] }]);
    expect(chain!.bridge.mode).to.equal('passthrough');
  });

  it('advertises acp upstream for a v2 agent that takes http, keeping its other capabilities', async () => {
    const result = await initialize({ version: 2, transports: ['http'] });
    expect(result).to.deep.equal({
      protocolVersion: 2,
      capabilities: { session: { mcp: { http: {}, acp: {} } } },
      agentInfo: { name: 'fake-agent', version: '1.0.0' },
    });
  });

  it('does not advertise acp, and rewrites nothing, for a v2 agent that takes neither http nor stdio', async () => {
    const agent = { version: 2, transports: [] } as const;
    expect(await initialize(agent)).to.deep.equal(fakeInitializeResult(agent));
    await chain!.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] });
    expect(chain!.received['session/new']).to.deep.equal([{ cwd: '/', mcpServers: [ACP_TOOLS] }]);
    expect(chain!.bridge.mode).to.equal('unavailable');
  });

  it('advertises acp for a v1 agent with neither http nor sse (v1 always takes stdio) and gives it a stdio server without type', async () => {
    const result = await initialize({ version: 1, transports: [] });
    expect((result.agentCapabilities as JsonObject).mcpCapabilities).to.deep.equal({ http: false, sse: false, acp: true });
    await chain!.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] });
    const [server] = chain!.received['session/new'][0]!.mcpServers as JsonObject[];
    expect(server).to.have.all.keys('name', 'command', 'args', 'env');
  });

  it('rewrites session/load and session/resume too, giving the same server the same URL and secret', async () => {
    await initialize({ version: 1, transports: ['http'] });
    const client = chain!.client.left;
    await client.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] });
    await client.sendRequest('session/load', { sessionId: 's-1', cwd: '/', mcpServers: [ACP_TOOLS] });
    await client.sendRequest('session/resume', { sessionId: 's-1', cwd: '/', mcpServers: [ACP_TOOLS] });
    const declared = (['session/new', 'session/load', 'session/resume'] as const).map(
      (method) => (chain!.received[method][0]!.mcpServers as JsonObject[])[0],
    );
    expect(declared[0]).to.deep.include({ type: 'http', name: 'tools' });
    expect(declared[1]).to.deep.equal(declared[0]);
    expect(declared[2]).to.deep.equal(declared[0]);
    expect(chain!.received['session/load'][0]).to.deep.include({ sessionId: 's-1', cwd: '/' });
  });

  it('gives stdio when preferred and taken, even to an agent that takes http too', async () => {
    await initialize({ version: 2, transports: ['http', 'stdio'] }, 'stdio');
    await chain!.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] });
    expect((chain!.received['session/new'][0]!.mcpServers as JsonObject[])[0]).to.deep.include({ type: 'stdio', name: 'tools' });
    expect(chain!.bridge.mode).to.equal('stdio');
  });
});
