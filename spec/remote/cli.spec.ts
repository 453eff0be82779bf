/**
 * Chains that span hosts, on one machine over 127.0.0.1: `acp-wire serve` exposing a stdio agent,
 * and `acp-wire conduct --listen` with components named by URL. Real processes; needs dist/.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  HttpStatusError,
  ProxyComponent,
  RpcError,
  connectHttp,
  connectTcp,
  connectWebSocket,
  listenTcp,
  type TcpListener,
} from '../../lib';
import { rejectionOf } from '../helpers/async';
import { spawnConductor } from '../helpers/chain';
import { parseMessage } from '../helpers/messages';
import { childProcesses, isRunning } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, childClosed, spawnScript, stopAll, useBuild, type SpawnedProcess } from '../helpers/processes';

const AGENT = `${process.execPath} ${CONFORMANCE_AGENT}`;
const CLIENT_INIT = { protocolVersion: 2, info: { name: 'spec-client', version: '1.0.0' } };
/** The test-only certificate for 127.0.0.1 and its key (see spec/remote/wss.spec.ts). */
const TLS_CERT = join(__dirname, '..', 'fixtures', 'tls', 'cert.pem');
const TLS_KEY = join(__dirname, '..', 'fixtures', 'tls', 'key.pem');

interface Cli extends SpawnedProcess {
  /** The URL of its `listening URL` first line. */
  readonly url: string;
}

const running = new Set<Cli>();

/** Starts `acp-wire <args>` and waits for its `listening ws://…` line. */
async function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Cli> {
  const spawned = spawnScript(CLI, args, { env });
  const { stdout, stderr, exited } = spawned;
  const first = await stdout.take().catch((error: Error) => {
    throw new Error(`${error.message}\nstderr: ${stderr.text}`);
  });
  const match = /^listening (wss?:\/\/127\.0\.0\.1:\d+\/acp)$/.exec(first);
  if (!match) throw new Error(`unexpected first line ${JSON.stringify(first)}; stderr: ${stderr.text}`);
  const cli = { ...spawned, url: match[1]! };
  running.add(cli);
  void exited.then(() => running.delete(cli));
  return cli;
}

/** Stops a CLI with SIGTERM and returns its exit code. */
async function stopCli(cli: Cli): Promise<number | null> {
  cli.child.kill('SIGTERM');
  const { code, signal } = await cli.exited;
  return code ?? (signal ? -1 : null);
}

/** The pids of the live children of `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  return childProcesses(pid).map((child) => child.pid);
}

/** Waits (polling /proc: another process's children have no event here) until `pid` has `count` children. */
async function untilChildren(pid: number, count: number): Promise<number[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const children = childrenOf(pid);
    if (children.length === count) return children;
    await delay(25);
  }
  throw new Error(`process ${pid} has children ${JSON.stringify(childrenOf(pid))}, expected ${count}`);
}

/**
 * Waits until a serve's health probe answers `ready` (200): its client slots are free again. The
 * agent process is reaped before the server has let go of the connection that held it.
 */
async function untilReady(httpUrl: string): Promise<void> {
  const health = new URL('/healthz', httpUrl);
  for (let attempt = 0; attempt < 200; attempt++) {
    const response = await fetch(health);
    await response.arrayBuffer();
    if (response.status === 200) return;
    await delay(25);
  }
  throw new Error(`${health.href} never answered 200`);
}

describe('acp-wire serve and remote chains (real processes)', () => {
  useBuild();

  afterEach(async () => {
    await Promise.all([...running].map(stopCli));
    await stopAll();
  });

  describe('acp-wire serve', () => {
    it('prints its ws URL first and serves the agent over WebSocket and Streamable HTTP', async () => {
      const serve = await startCli(['serve', '--port', '0', AGENT]);
      const ws = await connectWebSocket(serve.url);
      const init = await ws.sendRequest<{ info: { name: string } }>('initialize', CLIENT_INIT);
      expect(init.info.name).to.equal('acp-wire-conformance-agent');
      const http = connectHttp(serve.url.replace('ws://', 'http://'));
      expect(await http.sendRequest('initialize', CLIENT_INIT)).to.deep.equal(init);
      expect(await http.sendRequest('_test/echo', { over: 'http' })).to.deep.equal({ over: 'http' });
      await Promise.all([ws.close(), http.close()]);
      expect(await stopCli(serve)).to.equal(0);
    });

    it('runs one agent process per client connection and ends it with the connection', async () => {
      const serve = await startCli(['serve', AGENT]);
      const pid = serve.child.pid!;
      const first = await connectWebSocket(serve.url);
      const second = await connectWebSocket(serve.url);
      await Promise.all([first.sendRequest('initialize', CLIENT_INIT), second.sendRequest('initialize', CLIENT_INIT)]);
      // Each agent has its own state: a notification to one is not seen by the other.
      first.sendNotification('only/first');
      expect(await first.sendRequest('_test/received')).to.deep.equal({ notifications: [{ method: 'only/first' }] });
      expect(await second.sendRequest('_test/received')).to.deep.equal({ notifications: [] });
      const [a, b] = await untilChildren(pid, 2);
      expect(a).to.not.equal(b);
      await first.close();
      await untilChildren(pid, 1);
      await second.close();
      await untilChildren(pid, 0);
      expect(await stopCli(serve)).to.equal(0);
    });

    it('ends every agent process when it is stopped with clients still connected', async () => {
      const serve = await startCli(['serve', AGENT]);
      const client = await connectWebSocket(serve.url);
      const sleeping = client.sendRequest('_test/sleep', { ms: 60_000 });
      await client.sendRequest('initialize', CLIENT_INIT).catch(() => undefined);
      await untilChildren(serve.child.pid!, 1);
      const agents = childrenOf(serve.child.pid!);
      expect(await stopCli(serve)).to.equal(0);
      expect(await rejectionOf(sleeping))
        .to.have.property('name')
        .that.matches(/ConnectionClosedError|RpcError/);
      for (const agent of agents) expect(() => process.kill(agent, 0)).to.throw();
    });

    it('requires ACP_WIRE_TOKEN as the bearer token when it is set', async () => {
      const serve = await startCli(['serve', AGENT], { ACP_WIRE_TOKEN: 'tok3n' });
      const refused = await rejectionOf(connectWebSocket(serve.url, { token: 'wrong' }));
      expect(refused).to.be.instanceOf(HttpStatusError).and.include({ status: 401 });
      expect(childrenOf(serve.child.pid!)).to.deep.equal([]);
      const client = await connectWebSocket(serve.url, { token: 'tok3n' });
      expect(await client.sendRequest('initialize', CLIENT_INIT)).to.have.property('protocolVersion', 2);
      await client.close();
    });

    it('ends the agent of a Streamable HTTP client that initialized and walked away, and frees its slot (--http-idle-timeout)', async () => {
      const serve = await startCli(['serve', '--max-clients', '1', '--http-idle-timeout', '200', AGENT]);
      const httpUrl = serve.url.replace('ws://', 'http://');
      const initialize = (): Promise<Response> =>
        fetch(httpUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: CLIENT_INIT }),
        });
      const first = await initialize();
      expect(first.status).to.equal(200);
      await first.arrayBuffer();
      const [agent] = await untilChildren(serve.child.pid!, 1);
      // No GET, no DELETE: the client is gone.
      await serve.stderr.findText(
        /serve warn closed the Streamable HTTP client from 127\.0\.0\.1:\d+: no event stream and no request for 200 ms/,
      );
      await untilChildren(serve.child.pid!, 0);
      expect(isRunning(agent!)).to.equal(false);
      await untilReady(httpUrl);
      const next = await initialize();
      expect(next.status).to.equal(200);
      expect(await next.json()).to.have.nested.property('result.info.name', 'acp-wire-conformance-agent');
      expect(await stopCli(serve)).to.equal(0);
    });

    it('serves wss:// and https:// itself with --tls-cert and --tls-key, to clients that trust the certificate through ca', async () => {
      const serve = await startCli(['serve', '--tls-cert', TLS_CERT, '--tls-key', TLS_KEY, AGENT]);
      expect(serve.url).to.match(/^wss:\/\//);
      const ca = readFileSync(TLS_CERT, 'utf8');
      const ws = await connectWebSocket(serve.url, { ca });
      const init = await ws.sendRequest<{ info: { name: string } }>('initialize', CLIENT_INIT);
      expect(init.info.name).to.equal('acp-wire-conformance-agent');
      const http = connectHttp(serve.url.replace('wss://', 'https://'), { ca });
      expect(await http.sendRequest('initialize', CLIENT_INIT)).to.deep.equal(init);
      expect(await http.sendRequest('_test/echo', { over: 'https' })).to.deep.equal({ over: 'https' });
      await Promise.all([ws.close(), http.close()]);
      expect(await rejectionOf(connectWebSocket(serve.url)))
        .to.have.property('message')
        .that.matches(/self[- ]signed/i);
      expect(await stopCli(serve)).to.equal(0);
    });

    it('exits 2 when --tls-key is not the private key of a PEM certificate, naming both options', async () => {
      const run = spawnScript(CLI, ['serve', '--tls-cert', TLS_CERT, '--tls-key', TLS_CERT, AGENT]);
      const { code } = await childClosed(run.child);
      expect(code).to.equal(2);
      expect(run.stdout.text).to.equal('');
      expect(run.stderr.text).to.match(
        /^acp-wire serve: --tls-cert and --tls-key are not a PEM certificate and its private key: [^\n]+ \(see acp-wire serve --help\)\n$/,
      );
    });

    it('exits 2 for bad arguments, with one line on stderr naming the problem (the CLI convention) and nothing started', async () => {
      const cases: [string[], string][] = [
        [['serve'], 'give exactly one agent command (quote it) or --agent-module FILE, got 0'],
        [['serve', '--port', 'x', AGENT], '--port needs a port from 0 to 65535, got "x"'],
        [['serve', '--bogus', AGENT], 'unknown option --bogus'],
        [['serve', 'a', 'b'], 'give exactly one agent command (quote it) or --agent-module FILE, got 2'],
        [['serve', '--path', 'acp', AGENT], '--path needs a path that starts with "/" and has no query, fragment or space, got "acp"'],
        [['serve', '--max-clients', '0', AGENT], '--max-clients needs a number from 1 to 65535, got "0"'],
        [['serve', '--tls-cert', TLS_CERT, AGENT], 'give --tls-cert and --tls-key together'],
        [
          ['serve', '--http-idle-timeout', '1s', AGENT],
          '--http-idle-timeout needs a number of milliseconds from 0 to 2147483647, got "1s"',
        ],
        [['serve', 'node "agent.js'], 'cannot split the command "node \\"agent.js": a double quote is not closed'],
      ];
      for (const [args, problem] of cases) {
        const run = spawnScript(CLI, args);
        const { code } = await childClosed(run.child);
        expect({ code, stdout: run.stdout.text, stderr: run.stderr.text }, args.join(' ')).to.deep.equal({
          code: 2,
          stdout: '',
          stderr: `acp-wire serve: ${problem} (see acp-wire serve --help)\n`,
        });
      }
    });

    it('serve --help prints its usage on stdout and exits 0', async () => {
      const run = spawnScript(CLI, ['serve', '--help']);
      const { code } = await childClosed(run.child);
      expect(code).to.equal(0);
      expect(run.stdout.text.split('\n')[0]).to.equal('usage: acp-wire serve [options] [--] "<agent command>"');
      for (const option of [
        '--host HOST',
        '--port PORT',
        '--path PATH',
        '--allow-origin ORIGIN',
        '--max-clients N',
        '--http-idle-timeout MS',
        '--tls-cert FILE',
        '--tls-key FILE',
        '--insecure-no-token',
        '--kill-timeout MS',
        '-h, --help',
      ]) {
        expect(run.stdout.text).to.include(`  ${option} `);
      }
    });
  });

  describe('a chain across transports', () => {
    let proxyListener: TcpListener;
    before(async () => {
      // A passthrough proxy reached over TCP (in this process, as if on another host).
      proxyListener = await listenTcp({ port: 0 }, (connection) => void new ProxyComponent(connection));
    });
    after(async () => {
      await proxyListener.close();
    });

    it('client → conductor (--listen ws) → proxy over TCP → agent over WebSocket: a cancel reaches the agent once, with its own id', async () => {
      const serve = await startCli(['serve', AGENT], { ACP_WIRE_LOG: 'trace' });
      const conductor = await startCli(['conduct', '--listen', '0', `tcp://127.0.0.1:${proxyListener.port}`, serve.url]);
      const client = await connectWebSocket(conductor.url);
      const init = await client.sendRequest<{ protocolVersion: number }>('initialize', CLIENT_INIT);
      expect(init.protocolVersion).to.equal(2);
      const sleeping = client.sendRequest('_test/sleep', { ms: 60_000 });
      // Once this echo is back, the sleep has reached the agent (every hop keeps order).
      expect(await client.sendRequest('_test/echo', ['barrier'])).to.deep.equal(['barrier']);
      sleeping.cancel();
      const error = await rejectionOf(sleeping);
      expect(error).to.be.instanceOf(RpcError).and.include({ code: -32800 });
      const { notifications } = await client.sendRequest<{ notifications: { method: string; params: { requestId: unknown } }[] }>(
        '_test/received',
      );
      const cancels = notifications.filter((n) => n.method === '$/cancel_request');
      expect(cancels).to.have.length(1);
      // The agent's own trace names the id it received the sleep with: the cancel carries that one.
      const received = [...serve.stderr.text.matchAll(/ trace <- (\{.*\})$/gm)].map(
        (m) => JSON.parse(m[1]!) as { id?: unknown; method?: string },
      );
      const sleep = received.filter((m) => m.method === '_test/sleep');
      expect(sleep).to.have.length(1);
      expect(cancels[0]!.params.requestId).to.deep.equal(sleep[0]!.id);
      expect(received.filter((m) => m.method === '$/cancel_request')).to.have.length(1);
      await client.close();
      expect(await stopCli(conductor)).to.equal(0);
      expect(await stopCli(serve)).to.equal(0);
    });

    it("conduct on stdio connects a URL agent, and the client's exchange goes through it", async () => {
      const serve = await startCli(['serve', AGENT]);
      const chain = spawnConductor([serve.url]);
      const answer = parseMessage(await chain.request(0, 'initialize', CLIENT_INIT));
      expect(answer).to.have.nested.property('result.info.name', 'acp-wire-conformance-agent');
      expect(parseMessage(await chain.request(1, '_test/echo', { via: 'stdio then ws' }))).to.deep.equal({
        jsonrpc: '2.0',
        id: 1,
        result: { via: 'stdio then ws' },
      });
      // The served agent runs while the chain does, and ends with it.
      await untilChildren(serve.child.pid!, 1);
      expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
      await untilChildren(serve.child.pid!, 0);
    });

    it('conduct --tcp connects a URL agent for each TCP client', async () => {
      const serve = await startCli(['serve', AGENT]);
      const chain = spawnConductor(['--tcp', '0', `tcp://127.0.0.1:${proxyListener.port}`, serve.url]);
      const port = Number(/^listening (\d+)$/.exec(await chain.stdout.take())![1]);
      const clients = await Promise.all([connectTcp({ port }), connectTcp({ port })]);
      const answers = await Promise.all(clients.map((client) => client.sendRequest<{ info: { name: string } }>('initialize', CLIENT_INIT)));
      expect(answers.map((answer) => answer.info.name)).to.deep.equal(['acp-wire-conformance-agent', 'acp-wire-conformance-agent']);
      await untilChildren(serve.child.pid!, 2);
      await Promise.all(clients.map((client) => client.close()));
      await untilChildren(serve.child.pid!, 0);
      expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
    });

    it('conduct --listen --max-chains 1 refuses a second client with 503 and serves the first', async () => {
      const conductor = await startCli(['conduct', '--listen', '0', '--max-chains', '1', AGENT]);
      const first = await connectWebSocket(conductor.url);
      expect(await first.sendRequest('initialize', CLIENT_INIT)).to.have.property('protocolVersion', 2);
      const refused = await rejectionOf(connectWebSocket(conductor.url));
      expect(refused).to.be.instanceOf(HttpStatusError).and.include({ status: 503 });
      await conductor.stderr.findText(/conductor warn refused a client from 127\.0\.0\.1:\d+: client limit reached \(1 open\)/);
      expect(await first.sendRequest('_test/echo', ['still served'])).to.deep.equal(['still served']);
      await first.close();
      expect(await stopCli(conductor)).to.equal(0);
    });

    it('a URL component that refuses the connection ends the chain with a message, not a hang', async () => {
      const conductor = await startCli(['conduct', '--listen', '0', 'ws://127.0.0.1:1/acp']);
      const client = await connectWebSocket(conductor.url);
      const error = await rejectionOf(client.sendRequest('initialize', CLIENT_INIT));
      expect(error).to.have.property('name', 'ConnectionClosedError');
      await conductor.stderr.findText(/could not connect a component/);
      expect(await stopCli(conductor)).to.equal(1);
    });
  });
});
