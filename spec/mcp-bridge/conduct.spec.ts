/**
 * `acp-wire conduct --mcp-bridge` through real processes: the bridge runs in the conductor before
 * a real agent process, an MCP call reaches the client's provider, and the trace file never holds
 * the secret of a bridged server (the `Authorization` header of an http one, the env of a stdio one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Connection, connectTcp } from '../../lib';
import { McpProvider } from '../../lib/mcp';
import { REDACTED } from '../../lib/trace';
import { httpPost } from '../helpers/mcp-bridge';
import { CLI, ROOT, fixtureArgs, useBuild } from '../helpers/processes';

const ACP_TOOLS = { type: 'acp', name: 'tools', serverId: 'tools-1' };

describe('acp-wire conduct --mcp-bridge', function () {
  this.timeout(30000);
  useBuild();

  let dir: string;
  let conductor: ChildProcess | undefined;
  let client: Connection | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'acp-wire-bridge-'));
  });
  afterEach(async () => {
    await client?.close();
    if (conductor && conductor.exitCode === null && conductor.signalCode === null) {
      conductor.kill();
      await once(conductor, 'exit');
    }
    conductor = client = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the conductor with the bridge before the fixture agent; the spec is its client and provider. */
  function startConductor(transports: string[], traceFile: string, options: string[] = []): { client: Connection; provider: McpProvider } {
    const agent = [process.execPath, ...fixtureArgs('mcp-less-agent', transports)].join(' ');
    conductor = spawn(process.execPath, [CLI, 'conduct', '--mcp-bridge', ...options, '--trace-file', traceFile, agent], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    client = new Connection(conductor.stdout!, conductor.stdin!);
    const provider = new McpProvider();
    provider.serve(client);
    return { client, provider };
  }

  for (const [transports, secretOf] of [
    [['http'], (server: Record<string, unknown>) => (server.headers as { value: string }[])[0]!.value.slice('Bearer '.length)],
    [[], (server: Record<string, unknown>) => (server.env as { name: string; value: string }[])[1]!.value],
  ] as const) {
    const kind = transports.length > 0 ? 'http' : 'stdio';
    it(`gives a ${kind} agent the server, advertises acp, and keeps the ${kind} secret out of the trace file`, async () => {
      const traceFile = join(dir, 'trace.jsons');
      const { client: acp } = startConductor([...transports], traceFile);
      const init = (await acp.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} })) as {
        agentCapabilities: { mcpCapabilities: { acp?: boolean } };
      };
      expect(init.agentCapabilities.mcpCapabilities.acp).to.equal(true);
      const session = (await acp.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] })) as {
        _meta: { mcpServers: Record<string, unknown>[] };
      };
      const [server] = session._meta.mcpServers;
      const secret = secretOf(server!);
      expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
      await acp.close();
      await once(conductor!, 'exit');
      const trace = readFileSync(traceFile, 'utf8');
      expect(trace).to.contain('session/new').and.to.contain(REDACTED);
      expect(trace).not.to.contain(secret);
    });
  }

  it('gives an agent that takes http and stdio the stdio relay with --mcp-bridge-transport stdio', async () => {
    for (const [options, keys] of [
      [[], ['type', 'name', 'url', 'headers']],
      [
        ['--mcp-bridge-transport', 'stdio'],
        ['name', 'command', 'args', 'env'],
      ],
    ] as const) {
      const { client: acp } = startConductor(['http'], join(dir, 'trace.jsons'), [...options]);
      await acp.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const session = (await acp.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] })) as {
        _meta: { mcpServers: Record<string, unknown>[] };
      };
      expect(session._meta.mcpServers[0]).to.have.all.keys(...keys);
      await acp.close();
      await once(conductor!, 'exit');
    }
  });

  it('gives each --tcp client a bridge of its own before the agent, which advertises acp and rewrites its declarations', async () => {
    const agent = [process.execPath, ...fixtureArgs('mcp-less-agent', ['http'])].join(' ');
    conductor = spawn(process.execPath, [CLI, 'conduct', '--mcp-bridge', '--tcp', '0', agent], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const [line] = (await once(conductor.stdout!.setEncoding('utf8'), 'data')) as [string];
    const port = Number(/^listening (\d+)/.exec(line)![1]);
    const urls: string[] = [];
    for (let i = 0; i < 2; i++) {
      const tcp = await connectTcp({ host: '127.0.0.1', port });
      try {
        const init = (await tcp.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} })) as {
          agentCapabilities: { mcpCapabilities: { acp?: boolean } };
        };
        expect(init.agentCapabilities.mcpCapabilities.acp).to.equal(true);
        const session = (await tcp.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] })) as {
          _meta: { mcpServers: { type: string; url: string }[] };
        };
        expect(session._meta.mcpServers[0]!.type).to.equal('http');
        urls.push(session._meta.mcpServers[0]!.url);
      } finally {
        await tcp.close();
      }
    }
    expect(new URL(urls[0]!).port, 'one loopback endpoint per chain').not.to.equal(new URL(urls[1]!).port);
  });

  it('carries an MCP tools/call from the agent side to the provider of the conductor client', async () => {
    const { client: acp, provider } = startConductor(['http'], join(dir, 'trace.jsons'));
    provider.register({ name: 'tools', serverId: 'tools-1', handler: ({ method }) => ({ result: { method } }) });
    await acp.sendRequest('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const session = (await acp.sendRequest('session/new', { cwd: '/', mcpServers: [ACP_TOOLS] })) as {
      _meta: { mcpServers: { url: string; headers: { value: string }[] }[] };
    };
    const [{ url, headers }] = session._meta.mcpServers as [{ url: string; headers: { value: string }[] }];
    const authorization = headers[0]!.value;
    const init = await httpPost(
      url,
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {} } },
      { headers: { authorization } },
    );
    const sessionId = String(init.headers['mcp-session-id']);
    const call = await httpPost(
      url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } },
      { headers: { authorization, 'mcp-session-id': sessionId } },
    );
    expect(JSON.parse(call.body)).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { method: 'tools/call' } });
  });
});
