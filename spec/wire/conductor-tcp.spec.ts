/**
 * `acp-wire conduct --tcp` bounds through the real process: a chain starts on
 * the client's first byte, `--max-chains` refuses clients beyond it, `--idle-timeout` closes idle
 * clients. Agents are counted by the `started <pid>` line a preload writes on stderr.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { connectTcp, type Connection } from '../../lib';
import { nextEvent } from '../helpers/events';
import { spawnConductor } from '../helpers/chain';
import { CLIENT_INIT } from '../helpers/conformance-agent';
import { lineMatching } from '../helpers/messages';
import { CONFORMANCE_AGENT, ROOT, useBuild, type SpawnedProcess } from '../helpers/processes';

const COUNTED_AGENT = `node -r ${join(ROOT, 'spec', 'fixtures', 'announce-start.cjs')} ${CONFORMANCE_AGENT}`;
const isStarted = lineMatching(/^started \d+$/);

describe('acp-wire conduct --tcp bounds', function () {
  this.timeout(30000);
  useBuild();

  let chain: SpawnedProcess | undefined;
  const sockets: Socket[] = [];
  const clients: Connection[] = [];

  /** Starts the conductor on a free port and resolves with the port. */
  async function serve(...options: string[]): Promise<number> {
    chain = spawnConductor(['--tcp', '0', ...options, COUNTED_AGENT]);
    return Number(/^listening (\d+)$/.exec(await chain.stdout.take())![1]);
  }

  async function rawSocket(port: number): Promise<Socket> {
    const socket = createConnection({ host: '127.0.0.1', port });
    sockets.push(socket);
    await once(socket, 'connect');
    return socket;
  }

  async function initializedClient(port: number): Promise<Connection> {
    const client = await connectTcp({ port });
    clients.push(client);
    await client.sendRequest('initialize', CLIENT_INIT);
    return client;
  }

  /** Ends the conductor (stdin) and resolves with the agents that ever started, once every process that held its stderr is gone. */
  async function agentsStartedAtExit(): Promise<string[]> {
    expect(await chain!.stop()).to.deep.equal({ code: 0, signal: null });
    const stderr = chain!.child.stderr!;
    if (!stderr.closed) await once(stderr, 'close');
    return chain!.stderr.matching(isStarted);
  }

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await chain?.stop(); // at once when it already exited
    chain = undefined;
  });

  it('starts no agent for ten sockets that never send a byte', async () => {
    const port = await serve();
    for (let i = 0; i < 10; i++) await rawSocket(port);
    // Accepted in order: once this client is answered, the ten silent ones were accepted too.
    await initializedClient(port);
    for (const socket of sockets) expect(socket.destroyed, 'a silent socket stays open').to.equal(false);
    expect(await agentsStartedAtExit()).to.have.length(1);
  });

  it('refuses the client beyond --max-chains (closed, with a line on stderr) and serves one again once a chain ends', async () => {
    const port = await serve('--max-chains', '2');
    const [first] = [await initializedClient(port), await initializedClient(port)];
    await chain!.stderr.take(isStarted);
    await chain!.stderr.take(isStarted);
    const refused = await rawSocket(port);
    const refusedPort = refused.localPort;
    await once(refused, 'close');
    expect(await chain!.stderr.take((_, line) => line.includes('refused'))).to.match(
      new RegExp(`^\\S+ conductor warn refused a client from 127\\.0\\.0\\.1:${refusedPort}: client limit reached \\(2 open\\)$`),
    );
    await first!.close();
    // The slot is free once the server has seen the first client go: until then a client is refused.
    let answered: Connection | undefined;
    while (!answered) answered = await initializedClient(port).catch(() => undefined);
    await chain!.stderr.take(isStarted);
  });

  it('closes a silent socket after --idle-timeout, starting no agent', async () => {
    const port = await serve('--idle-timeout', '50');
    const silent = await rawSocket(port);
    await once(silent, 'close');
    expect(await agentsStartedAtExit()).to.deep.equal([]);
  });

  it('closes an idle client after --idle-timeout, shutting its chain down', async () => {
    // Far above the client's gap between connecting and sending initialize.
    const port = await serve('--idle-timeout', '300');
    const client = await initializedClient(port);
    const [reason] = await nextEvent<[string]>(client, 'close');
    expect(reason).to.equal('input ended');
  });

  it('keeps a client whose request is in flight past --idle-timeout', async () => {
    // A timeout far above a client's own gaps (connect to first byte, answer to next request),
    // which a loaded machine stretches: a client silent that long is idle by right.
    const port = await serve('--idle-timeout', '1000');
    const client = await initializedClient(port);
    expect(await client.sendRequest('_test/sleep', { ms: 2000 })).to.deep.equal({ slept: 2000 });
  });
});
