/**
 * AgentHost in this process: agent instances per client of a real remote server on 127.0.0.1,
 * and what happens to their disposal.
 */
import { expect } from 'chai';
import type { AgentFactory, HostedAgentFailure } from '../../lib/hosting/agent-factory';
import { AgentHost } from '../../lib/hosting/agent-host';
import { AcpAgent, connectWebSocket, listenRemoteStreams, type Connection, type RemoteListener } from '../../lib';

describe('AgentHost', () => {
  let listener: RemoteListener | undefined;
  const clients = new Set<Connection>();

  afterEach(async () => {
    await Promise.all([...clients].map((client) => client.close()));
    clients.clear();
    await listener?.close();
    listener = undefined;
  });

  /** A server whose clients get instances of `factory`; resolves with the host, its URL and its failures. */
  async function serveHost(factory: AgentFactory, disposeTimeoutMs = 1000) {
    const failures: HostedAgentFailure[] = [];
    const host = new AgentHost({ factory, disposeTimeoutMs, onFailure: (failure) => failures.push(failure) });
    listener = await listenRemoteStreams({ port: 0 }, (stream, info) => host.host(stream, info));
    return { host, url: listener.url, failures };
  }

  async function connect(url: string): Promise<Connection> {
    const client = await connectWebSocket(url);
    clients.add(client);
    return client;
  }

  it('calls [Symbol.dispose]() of a synchronous instance once its client has closed', async () => {
    let disposed = 0;
    const { host, url } = await serveHost((connection) => {
      connection.onRequest('ping', () => 'pong');
      return { [Symbol.dispose]: () => void (disposed += 1) };
    });
    const client = await connect(url);
    expect(await client.sendRequest('ping')).to.equal('pong');
    expect(host.size).to.equal(1);
    await client.close();
    await host.whenAllEnded();
    expect({ disposed, size: host.size }).to.deep.equal({ disposed: 1, size: 0 });
  });

  it('accepts a factory that returns nothing, and ends that instance with its client', async () => {
    const { host, url } = await serveHost((connection) => void connection.onRequest('ping', () => 'pong'));
    const client = await connect(url);
    expect(await client.sendRequest('ping')).to.equal('pong');
    await client.close();
    await host.whenAllEnded();
    expect(host.size).to.equal(0);
  });

  it('reports a dispose that overruns disposeTimeoutMs (stage "dispose") and stops waiting for it', async () => {
    const { host, url, failures } = await serveHost(() => ({ [Symbol.asyncDispose]: () => new Promise<void>(() => {}) }), 50);
    const client = await connect(url);
    await client.sendRequest('anything').catch(() => undefined);
    await client.close();
    await host.whenAllEnded();
    expect(failures).to.have.length(1);
    expect(failures[0]).to.include({ stage: 'dispose' });
    expect((failures[0]!.error as Error).message).to.equal('its dispose did not finish within 50 ms');
  });

  it('reports a dispose that throws (stage "dispose") with what it threw', async () => {
    const thrown = new Error('dispose failed');
    const { host, url, failures } = await serveHost(() => ({
      [Symbol.dispose]: () => {
        throw thrown;
      },
    }));
    const client = await connect(url);
    await client.sendRequest('anything').catch(() => undefined);
    await client.close();
    await host.whenAllEnded();
    expect(failures.map(({ stage, error }) => ({ stage, error }))).to.deep.equal([{ stage: 'dispose', error: thrown }]);
  });

  it('aborts info.signal when the client has closed, before the instance is disposed', async () => {
    const order: string[] = [];
    const { host, url } = await serveHost((_connection, { signal }) => {
      signal.addEventListener('abort', () => order.push('aborted'));
      return { [Symbol.asyncDispose]: async () => void order.push('disposed') };
    });
    const client = await connect(url);
    await client.sendRequest('anything').catch(() => undefined);
    await client.close();
    await host.whenAllEnded();
    expect(order).to.deep.equal(['aborted', 'disposed']);
  });

  it('fails the current instance only from code running in its context (failCurrent)', async () => {
    const { host, url, failures } = await serveHost((connection) => {
      connection.onRequest('fail', () => {
        setTimeout(() => host.failCurrent(new Error('from a timer of the instance')), 0);
        return 'scheduled';
      });
    });
    expect(host.failCurrent(new Error('not in an instance'))).to.equal(false);
    const client = await connect(url);
    const closed = new Promise((resolve) => client.once('close', resolve));
    expect(await client.sendRequest('fail')).to.equal('scheduled');
    await closed;
    await host.whenAllEnded();
    expect(failures.map(({ stage, error }) => ({ stage, message: (error as Error).message }))).to.deep.equal([
      { stage: 'run', message: 'from a timer of the instance' },
    ]);
  });

  it('an AcpAgent given a Connection of another acp-wire copy throws a TypeError that says so (an agent module with its own copy)', () => {
    // What a Connection built by another copy looks like to this one: the same methods, none of its hooks.
    const foreign = { onRequest: () => ({}), onNotification: () => ({}), once: () => foreign } as unknown as Connection;
    expect(() => new AcpAgent(foreign, { info: { name: 'a', version: '1' }, prompt: () => 'end_turn' })).to.throw(
      TypeError,
      'this Connection was not made by this copy of acp-wire: load acp-wire once (one version, one path) per process',
    );
  });
});
