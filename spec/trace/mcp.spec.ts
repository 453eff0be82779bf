/**
 * MCP-over-ACP in a trace: an `mcp/message` is one event per hop named by its inner MCP method,
 * with protocol `mcp`, and the viewer draws it under that name.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { TraceEvent } from '../../lib/trace';
import { CLIENT_INIT, ROOT, ensureBuilt, schemaErrors, startTracedChain } from './helpers';

const TOOL_PROXY = `node ${join(ROOT, 'dist', 'examples', 'tool-proxy.js')}`;
const TOOL_AGENT = `node ${join(ROOT, 'dist', 'examples', 'tool-agent.js')}`;

describe('Conductor trace of a tool call (MCP-over-ACP)', function () {
  this.timeout(30_000);
  before(() => ensureBuilt());

  it('traces each mcp/message as its inner method with protocol mcp, agent → proxy, never as mcp/message', async () => {
    const chain = startTracedChain([TOOL_PROXY, TOOL_AGENT]);
    try {
      await chain.client.sendRequest('initialize', CLIENT_INIT);
      const { sessionId } = (await chain.client.sendRequest('session/new', { cwd: ROOT, mcpServers: [] })) as { sessionId: string };
      await chain.client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'two words' }] });
      const call = await chain.waitForEvent((event) => event.type === 'request' && event.method === 'tools/call');
      await chain.waitForEvent((event) => event.type === 'response' && event.from === 'Proxy(0)' && 'id' in call && event.id === call.id);
      const requests = chain.events.filter(
        (event): event is Extract<TraceEvent, { type: 'request' }> => event.type === 'request' && event.protocol === 'mcp',
      );
      expect(requests.map(({ from, to, method }) => ({ from, to, method }))).to.deep.equal([
        { from: 'Agent', to: 'Proxy(0)', method: 'tools/list' },
        { from: 'Agent', to: 'Proxy(0)', method: 'tools/call' },
      ]);
      expect(requests[1]!.params).to.deep.include({ name: 'word_count', arguments: { text: 'two words' } });
      expect(chain.events.some((event) => 'method' in event && event.method === 'mcp/message')).to.equal(false);
      expect(chain.events.map(schemaErrors).filter(Boolean)).to.deep.equal([]);
    } finally {
      await chain.close();
    }
  });
});
