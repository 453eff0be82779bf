/**
 * acp-http-client (rivet's sandbox-agent Streamable HTTP client, a real client written elsewhere)
 * drives `acp-wire serve` unmodified: a real `serve` process with the conformance agent, the
 * connection id in the URL path, each request's answer in its POST body, updates on its GET stream.
 */
import { expect } from 'chai';
import { stillRunningAfter, childProcesses } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, spawnScript, stopAll, useBuild, type SpawnedProcess } from '../helpers/processes';
import { UnhandledRejections } from '../helpers/events';
import { REAL_PEERS, commandLine, installedVersion, requireRealPeers } from '../helpers/real-peers';

/** The part of acp-http-client's API the spec uses (its own types need its nested SDK). */
interface AcpHttpClient {
  initialize(request: { protocolVersion: number }): Promise<{ protocolVersion: number; agentInfo?: { name: string } }>;
  newSession(request: { cwd: string; mcpServers: [] }): Promise<{ sessionId: string }>;
  prompt(request: { sessionId: string; prompt: { type: 'text'; text: string }[]; _meta?: object }): Promise<{ stopReason: string }>;
  cancel(notification: { sessionId: string }): Promise<void>;
  extNotification(method: string, params: Record<string, unknown>): Promise<void>;
  disconnect(): Promise<void>;
  readonly closed: Promise<void>;
}

interface Envelope {
  readonly id?: unknown;
  readonly method?: string;
  readonly params?: { update?: { sessionUpdate?: string; content?: { text?: string } } };
}

interface AcpHttpClientOptions {
  baseUrl: string;
  fetch: typeof fetch;
  transport: { path: string };
  client: { sessionUpdate(notification: Envelope['params']): Promise<void> };
  onEnvelope(envelope: Envelope, direction: 'inbound' | 'outbound'): void;
}

const AGENT = commandLine(process.execPath, CONFORMANCE_AGENT);
/** How long a wait for an update lasts (the test's own timeout is longer). */
const WAIT_MS = 20_000;

/** One HTTP exchange the client made, as `METHOD status`. */
type Exchange = `${string} ${number}`;

/** acp-http-client on a `serve` URL, recording its HTTP exchanges and the text of the updates it received. */
class Peer {
  readonly exchanges: Exchange[] = [];
  readonly outbound: Envelope[] = [];
  text = '';
  readonly client: AcpHttpClient;
  #onText: (() => void) | undefined;

  constructor(port: number, connectionId: string) {
    const { AcpHttpClient } = require(REAL_PEERS.acpHttpClient) as { AcpHttpClient: new (options: AcpHttpClientOptions) => AcpHttpClient };
    this.client = new AcpHttpClient({
      baseUrl: `http://127.0.0.1:${port}`,
      transport: { path: `/acp/${connectionId}` },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        this.exchanges.push(`${init?.method ?? 'GET'} ${response.status}`);
        return response;
      },
      client: {
        sessionUpdate: async (params) => {
          if (params?.update?.sessionUpdate === 'agent_message_chunk') this.text += params.update.content?.text ?? '';
          this.#onText?.();
        },
      },
      onEnvelope: (envelope, direction) => {
        if (direction === 'outbound') this.outbound.push(envelope);
      },
    });
  }

  /** Resolves once the updates received so far spell `expected` (they come on the GET stream, the answer on its POST). */
  async untilText(expected: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (this.text !== expected) {
      if (Date.now() > deadline) throw new Error(`updates spell ${JSON.stringify(this.text)}, expected ${JSON.stringify(expected)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.#onText = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.#onText = undefined;
  }

  /** The id acp-http-client gave its last `method` request. */
  lastIdOf(method: string): unknown {
    return this.outbound.filter((envelope) => envelope.method === method).at(-1)?.id;
  }
}

describe(`acp-http-client ${installedVersion('acp-http-client')} (a real Streamable HTTP client) against acp-wire serve`, function () {
  this.timeout(60_000);
  useBuild();
  const rejections = new UnhandledRejections();
  let serve: SpawnedProcess;
  let port: number;
  let errors: unknown[][];
  const consoleError = console.error;

  before(() => {
    requireRealPeers();
    rejections.install();
  });

  after(() => rejections.uninstall());

  beforeEach(async () => {
    errors = [];
    // acp-http-client reports a failed POST with console.error("ACP write error:", …).
    console.error = (...args: unknown[]) => void errors.push(args);
    serve = spawnScript(CLI, ['serve', '--port', '0', AGENT]);
    const first = await serve.stdout.take();
    port = Number(/^listening ws:\/\/127\.0\.0\.1:(\d+)\/acp$/.exec(first)?.[1]);
    expect(port, first).to.be.greaterThan(0);
  });

  afterEach(async () => {
    console.error = consoleError;
    serve.child.kill('SIGTERM');
    expect((await serve.exited).code).to.equal(0);
    await stopAll();
    expect(errors, 'console.error calls').to.deep.equal([]);
    expect(rejections.reasons, 'unhandled rejections').to.deep.equal([]);
  });

  /** Opens a client, initializes it (ACP v1) and creates a session; checks one agent process serves it. */
  async function connected(connectionId: string): Promise<{ peer: Peer; sessionId: string; agents: number[] }> {
    const before = new Set(childProcesses(serve.child.pid!).map(({ pid }) => pid));
    const peer = new Peer(port, connectionId);
    const initialized = await peer.client.initialize({ protocolVersion: 1 });
    expect(initialized).to.include({ protocolVersion: 1 }).and.have.nested.property('agentInfo.name', 'acp-wire-conformance-agent');
    const { sessionId } = await peer.client.newSession({ cwd: '/tmp', mcpServers: [] });
    const agents = childProcesses(serve.child.pid!)
      .map(({ pid }) => pid)
      .filter((pid) => !before.has(pid));
    expect(agents, 'agent processes started for this client').to.have.length(1);
    return { peer, sessionId, agents };
  }

  /** Disconnects (DELETE) and checks that the agent process has ended. */
  async function disconnect(peer: Peer, agents: number[]): Promise<void> {
    await peer.client.disconnect();
    await peer.client.closed;
    expect(peer.exchanges.filter((exchange) => exchange.startsWith('DELETE'))).to.deep.equal(['DELETE 202']);
    expect(await stillRunningAfter(agents, 10_000), 'agent processes still running').to.deep.equal([]);
  }

  it('runs v1 turns streamed to end_turn, then closes with DELETE 202 and the agent ends', async () => {
    const { peer, sessionId, agents } = await connected('turns-1');
    for (const text of ['hello there', 'one two three four']) {
      peer.text = '';
      expect(await peer.client.prompt({ sessionId, prompt: [{ type: 'text', text }] })).to.deep.equal({ stopReason: 'end_turn' });
      await peer.untilText(`echo: ${text}`);
    }
    await disconnect(peer, agents);
    // Every POST answered 200 (a request) or 202 (a notification), the GET stream 200: no refusal.
    expect(peer.exchanges.filter((exchange) => !/^(POST 20[02]|GET 200|DELETE 202)$/.test(exchange))).to.deep.equal([]);
    expect(peer.exchanges).to.include('GET 200');
  });

  it('ends a turn cancelled with session/cancel', async () => {
    const { peer, sessionId, agents } = await connected('cancel-1');
    const turn = peer.client.prompt({ sessionId, prompt: [{ type: 'text', text: 'a b c d' }], _meta: { workMs: 60_000 } });
    await peer.untilText('echo: ');
    await peer.client.cancel({ sessionId });
    expect(await turn).to.deep.equal({ stopReason: 'cancelled' });
    await disconnect(peer, agents);
  });

  it('gets -32800 for a prompt it withdraws with $/cancel_request', async () => {
    const { peer, sessionId, agents } = await connected('withdraw-1');
    const turn = peer.client.prompt({ sessionId, prompt: [{ type: 'text', text: 'a b c d' }], _meta: { workMs: 60_000 } });
    const failure = turn.then(
      () => undefined,
      (error: unknown) => error,
    );
    await peer.untilText('echo: ');
    await peer.client.extNotification('$/cancel_request', { requestId: peer.lastIdOf('session/prompt') as number });
    expect(await failure)
      .to.include({ name: 'AcpRpcError', code: -32800 })
      .and.have.property('message')
      .that.matches(/Request cancelled/);
    await disconnect(peer, agents);
  });

  it('serves two clients at once, each with its own agent process', async () => {
    const first = await connected('pair-1');
    const second = await connected('pair-2');
    expect(second.agents).to.not.deep.equal(first.agents);
    const turns = [first, second].map(({ peer, sessionId }, i) =>
      peer.client.prompt({ sessionId, prompt: [{ type: 'text', text: `client ${i}` }] }),
    );
    expect(await Promise.all(turns)).to.deep.equal([{ stopReason: 'end_turn' }, { stopReason: 'end_turn' }]);
    await Promise.all([first.peer.untilText('echo: client 0'), second.peer.untilText('echo: client 1')]);
    await disconnect(first.peer, first.agents);
    await disconnect(second.peer, second.agents);
  });
});
