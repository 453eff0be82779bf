/**
 * What the bridge's loopback endpoint refuses before anything reaches the provider: a missing or
 * wrong secret, a foreign Origin, a Host that is not the loopback listener (DNS rebinding), an
 * unknown path; and that it stops listening when the chain closes.
 */
import { expect } from 'chai';
import { type BridgeChain, httpDeclarationOf, httpPost, startBridgeChain } from '../helpers/mcp-bridge';
import { useBuild } from '../helpers/processes';
import { rejectionOf } from '../helpers/async';

const INITIALIZE = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } };

describe('McpBridge endpoint guards', function () {
  this.timeout(20000);
  useBuild();

  let chain: BridgeChain;
  let url: string;
  let authorization: string;

  beforeEach(async () => {
    chain = startBridgeChain({ version: 1, transports: ['http'] });
    await chain.client.left.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
    await chain.client.left.sendRequest('session/new', { cwd: '/', mcpServers: [{ type: 'acp', name: 'tools', serverId: 'tools-1' }] });
    ({ url, authorization } = httpDeclarationOf(chain.received));
  });
  afterEach(() => chain.close());

  it('answers 401 without the secret, or with a wrong one, and never calls the provider', async () => {
    const missing = await httpPost(url, INITIALIZE);
    // A secret that differs in its last character (which must then not already be that character).
    const wrongSecret = `${authorization.slice(0, -1)}${authorization.endsWith('A') ? 'B' : 'A'}`;
    const wrong = await httpPost(url, INITIALIZE, { headers: { authorization: wrongSecret } });
    const otherScheme = await httpPost(url, INITIALIZE, { headers: { authorization: authorization.replace('Bearer', 'Basic') } });
    expect([missing.status, wrong.status, otherScheme.status]).to.deep.equal([401, 401, 401]);
    expect(missing.headers['www-authenticate']).to.equal('Bearer');
    expect(chain.calls).to.deep.equal([]);
  });

  it('answers 403 to a foreign Origin, and accepts a loopback one', async () => {
    const foreign = await httpPost(url, INITIALIZE, { headers: { authorization, origin: 'https://evil.example' } });
    const nullOrigin = await httpPost(url, INITIALIZE, { headers: { authorization, origin: 'null' } });
    expect([foreign.status, nullOrigin.status]).to.deep.equal([403, 403]);
    expect(chain.calls).to.deep.equal([]);
    const local = await httpPost(url, INITIALIZE, { headers: { authorization, origin: 'http://localhost:3000' } });
    expect(local.status).to.equal(200);
  });

  it('answers 403 to a Host that is not the loopback listener (a rebinding name or another port)', async () => {
    const port = new URL(url).port;
    const rebound = await httpPost(url, INITIALIZE, { headers: { authorization, host: `attacker.example:${port}` } });
    const otherPort = await httpPost(url, INITIALIZE, { headers: { authorization, host: '127.0.0.1:1' } });
    expect([rebound.status, otherPort.status]).to.deep.equal([403, 403]);
    const localhost = await httpPost(url, INITIALIZE, { headers: { authorization, host: `localhost:${port}` } });
    expect(localhost.status).to.equal(200);
  });

  it("answers 404 to a path that is no server's, even with a server's secret", async () => {
    const answer = await httpPost(`${new URL(url).origin}/mcp/not-a-route`, INITIALIZE, { headers: { authorization } });
    expect(answer.status).to.equal(404);
    expect(chain.calls).to.deep.equal([]);
  });

  it('stops listening when the conductor closes the chain', async () => {
    await chain.conductor.close();
    await chain.bridge.closed;
    const error = await rejectionOf<NodeJS.ErrnoException>(httpPost(url, INITIALIZE, { headers: { authorization } }));
    expect(error.code).to.equal('ECONNREFUSED');
  });
});
