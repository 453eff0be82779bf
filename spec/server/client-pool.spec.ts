/**
 * ClientPool: the clients of every bounded server (listenTcp, listenRemote, listenConductor) —
 * up to N at once, an idle timeout that spares work in flight, and one close() for them all.
 */
import { expect } from 'chai';
import { EventEmitter, once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { ClientPool, ClientRefusedError, type PooledChain, type PooledClient } from '../../lib/hosting';
import {
  connectHttp,
  connectTcp,
  connectWebSocket,
  createConnectionPair,
  listenConductor,
  listenRemote,
  listenTcp,
  type Connection,
} from '../../lib';
import { rejectionOf } from '../helpers/async';
import { AGENT_COMMAND } from '../helpers/chain';
import { CLIENT_INIT } from '../helpers/conformance-agent';
import { nextEvent } from '../helpers/events';
import { useBuild } from '../helpers/processes';

/** A transport that closes when told to. */
function fakeTransport(): EventEmitter & { end(): void } {
  const transport = new EventEmitter() as EventEmitter & { end(): void };
  transport.end = () => void transport.emit('close');
  return transport;
}

/** A chain that records its close and settles `closed` once closed. */
function fakeChain(): PooledChain & { closes: number } {
  let settle!: () => void;
  const closed = new Promise<void>((resolve) => (settle = resolve));
  const chain = {
    closes: 0,
    closed,
    close: async () => {
      chain.closes++;
      settle();
      await closed;
    },
  };
  return chain;
}

/** Admits a client on a fresh fake transport; fails the test when refused. */
function admitted(pool: ClientPool, peer: string): PooledClient & { transport: ReturnType<typeof fakeTransport> } {
  const client = pool.admit(peer);
  expect(client, `${peer} admitted`).to.not.equal(undefined);
  const transport = fakeTransport();
  client!.bind(transport, () => transport.end());
  return Object.assign(client!, { transport });
}

/** The number of open TCP handles (servers and sockets). */
function handles(): { tcp: number } {
  return { tcp: process.getActiveResourcesInfo().filter((name) => name.startsWith('TCP')).length };
}

/** Waits until the open TCP handles are back to `tcp` (a handle goes a turn after its 'close'). */
async function tcpHandlesBackTo(tcp: number): Promise<number> {
  for (let turn = 0; turn < 50 && handles().tcp > tcp; turn++) await new Promise((resolve) => setImmediate(resolve));
  return handles().tcp;
}

describe('ClientPool', () => {
  describe('#admit()', () => {
    it('admits up to maxClients and refuses the next with a ClientRefusedError ACP_WIRE_CLIENT_LIMIT naming the peer', () => {
      const pool = new ClientPool({ maxClients: 2 });
      const refusals: ClientRefusedError[] = [];
      pool.on('refused', (error) => refusals.push(error));
      admitted(pool, 'a:1');
      admitted(pool, 'b:2');
      expect(pool.admit('c:3')).to.equal(undefined);
      expect(pool.size).to.equal(2);
      expect(refusals).to.have.length(1);
      expect(refusals[0]).to.be.instanceOf(ClientRefusedError).and.include({ code: 'ACP_WIRE_CLIENT_LIMIT', peer: 'c:3', open: 2 });
      expect(refusals[0]!.message).to.equal('client limit reached (2 open)');
    });

    it("frees a client's slot when its transport closes, with a 'closed' event", () => {
      const pool = new ClientPool({ maxClients: 1 });
      const first = admitted(pool, 'a:1');
      const left: string[] = [];
      pool.on('closed', (client) => left.push(client.peer));
      first.transport.end();
      expect(left).to.deep.equal(['a:1']);
      expect(first.hasLeft).to.equal(true);
      admitted(pool, 'b:2');
    });

    it('frees the slot when the attached connection closes, before its transport does', async () => {
      const pool = new ClientPool({ maxClients: 1 });
      const [server, peer] = createConnectionPair();
      const client = admitted(pool, 'a:1');
      client.attach(server);
      await server.close();
      expect(pool.size).to.equal(0);
      await peer.close();
    });

    it('refuses every client with ACP_WIRE_SERVER_CLOSED once close() has begun', async () => {
      const pool = new ClientPool();
      const refused = nextEvent<[ClientRefusedError]>(pool, 'refused');
      await pool.close();
      expect(pool.admit('a:1')).to.equal(undefined);
      expect((await refused)[0]).to.include({ code: 'ACP_WIRE_SERVER_CLOSED', peer: 'a:1' });
    });

    it('throws RangeError naming maxClients or idleTimeoutMs for a bad value', () => {
      expect(() => new ClientPool({ maxClients: 0 })).to.throw(RangeError, /maxClients/);
      expect(() => new ClientPool({ idleTimeoutMs: -1 })).to.throw(RangeError, /idleTimeoutMs/);
    });
  });

  describe('#close()', () => {
    it("closes every client's chain, connection or transport, and aborts its signal", async () => {
      const pool = new ClientPool();
      const withChain = admitted(pool, 'chain:1');
      const chain = fakeChain();
      withChain.attachChain(chain);
      const [server, peer] = createConnectionPair();
      admitted(pool, 'connection:2').attach(server);
      const bare = admitted(pool, 'bare:3');
      await pool.close();
      expect(chain.closes).to.equal(1);
      expect(server.isClosed).to.equal(true);
      expect(bare.hasLeft).to.equal(true);
      expect(pool.signal.aborted).to.equal(true);
      await peer.close();
    });

    it('waits for a chain whose client has left, and for work it tracks', async () => {
      const pool = new ClientPool();
      const client = admitted(pool, 'a:1');
      const chain = fakeChain();
      client.attachChain(chain);
      client.transport.end();
      let isWorkDone = false;
      pool.track(delay(10).then(() => (isWorkDone = true)));
      await pool[Symbol.asyncDispose]();
      expect(chain.closes).to.equal(1);
      expect(isWorkDone).to.equal(true);
    });
  });

  describe('over TCP (listenTcp)', () => {
    const sockets: Socket[] = [];
    afterEach(() => {
      for (const socket of sockets.splice(0)) socket.destroy();
    });

    it("destroys a socket beyond maxConnections, and emits 'refused' on listener.pool", async () => {
      await using listener = await listenTcp({ port: 0 }, () => {}, { maxConnections: 1, logger: { traces: false, log: () => {} } });
      const refused = nextEvent<[ClientRefusedError]>(listener.pool, 'refused');
      const accepted = nextEvent(listener.pool, 'accepted');
      const first = await connectTcp({ port: listener.port });
      await accepted;
      const second = createConnection({ host: '127.0.0.1', port: listener.port });
      sockets.push(second);
      await once(second, 'connect');
      const port = second.localPort;
      await once(second, 'close');
      expect((await refused)[0]).to.include({ code: 'ACP_WIRE_CLIENT_LIMIT', peer: `127.0.0.1:${port}`, open: 1 });
      await first.close();
    });

    it('closes a silent client with nothing in flight after idleTimeoutMs', async () => {
      await using listener = await listenTcp({ port: 0 }, () => {}, { idleTimeoutMs: 20, logger: { traces: false, log: () => {} } });
      const client = await connectTcp({ port: listener.port });
      const [idle] = await nextEvent<[PooledClient]>(listener.pool, 'idle');
      expect(idle.peer).to.match(/^127\.0\.0\.1:\d+$/);
      await nextEvent(client, 'close');
      expect(listener.pool.size).to.equal(0);
    });

    it('keeps a client with work in flight across several idle timeouts', async () => {
      const idles: PooledClient[] = [];
      let answered: PromiseLike<unknown> | undefined;
      // The server's request is in flight from the moment the client is accepted.
      await using listener = await listenTcp({ port: 0 }, (connection) => void (answered = connection.sendRequest('slow')), {
        idleTimeoutMs: 20,
        logger: { traces: false, log: () => {} },
      });
      listener.pool.on('idle', (client) => idles.push(client));
      const accepted = nextEvent(listener.pool, 'accepted');
      const client = await connectTcp({ port: listener.port });
      client.onRequest('slow', () => delay(150).then(() => 'late'));
      await accepted;
      expect(await answered).to.equal('late');
      expect(idles).to.deep.equal([]);
      await client.close();
    });

    // Timers are checked for the whole file by spec/helpers/open-handles.ts.
    it('close() closes every client and leaves no socket behind', async () => {
      const before = handles();
      const listener = await listenTcp({ port: 0 }, () => {}, { idleTimeoutMs: 60_000 });
      const clients: Connection[] = [];
      for (let i = 0; i < 3; i++) {
        const accepted = nextEvent(listener.pool, 'accepted');
        clients.push(await connectTcp({ port: listener.port }));
        await accepted;
      }
      const closed = clients.map((client) => nextEvent(client, 'close'));
      await listener.close();
      await Promise.all(closed);
      expect(listener.pool.size).to.equal(0);
      expect(await tcpHandlesBackTo(before.tcp)).to.equal(before.tcp);
    });
  });

  describe('over WebSocket and Streamable HTTP (listenRemote)', () => {
    it("answers a WebSocket upgrade and an initialize POST beyond maxClients 503, with 'refused' events", async () => {
      await using listener = await listenRemote({ maxClients: 1, logger: { traces: false, log: () => {} } }, (connection) => {
        connection.onRequest('initialize', () => ({ protocolVersion: 2 }));
      });
      const refusals: ClientRefusedError[] = [];
      listener.pool.on('refused', (error) => refusals.push(error));
      const first = await connectWebSocket(listener.url);
      expect(await first.sendRequest('initialize', {})).to.deep.equal({ protocolVersion: 2 });
      const upgrade = await rejectionOf(connectWebSocket(listener.url));
      expect(upgrade).to.include({ status: 503 });
      const post = await fetch(listener.httpUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      });
      expect(post.status).to.equal(503);
      await post.text();
      expect(refusals.map((error) => error.code)).to.deep.equal(['ACP_WIRE_CLIENT_LIMIT', 'ACP_WIRE_CLIENT_LIMIT']);
      await first.close();
    });
  });

  describe('a chain per client (listenConductor)', function () {
    this.timeout(30_000);
    useBuild();

    for (const transport of ['WebSocket', 'Streamable HTTP'] as const) {
      it(`runs a chain for each ${transport} client of a ws:// listen URL, and close() ends them all`, async () => {
        const listener = await listenConductor('ws://127.0.0.1:0/acp', { components: [AGENT_COMMAND] });
        const url = transport === 'WebSocket' ? listener.url : listener.url.replace(/^ws:/, 'http:');
        const connect = (): Promise<Connection> | Connection => (transport === 'WebSocket' ? connectWebSocket(url) : connectHttp(url));
        const clients = [await connect(), await connect()];
        const answers = await Promise.all(clients.map((client) => client.sendRequest('initialize', CLIENT_INIT)));
        expect(answers.map((answer) => (answer as { protocolVersion: number }).protocolVersion)).to.deep.equal([2, 2]);
        expect(listener.chains.size).to.equal(2);
        expect(listener.pool.size).to.equal(2);
        const chains = [...listener.chains];
        const clientsClosed = clients.map((client) => nextEvent(client, 'close'));
        await listener.close();
        await Promise.all(clientsClosed);
        expect(listener.chains.size).to.equal(0);
        for (const chain of chains) expect(await chain.components[0]!.exited).to.deep.equal({ code: 0, signal: null });
        expect(listener.server.listening).to.equal(false);
      });
    }

    it('throws TypeError for a listen URL of another scheme, before listening', () => {
      expect(() => listenConductor('wss://127.0.0.1:0/acp', { components: [AGENT_COMMAND] })).to.throw(TypeError, /wss:/);
      expect(() => listenConductor('tcp://127.0.0.1', { components: [AGENT_COMMAND] })).to.throw(TypeError, /port/);
    });
  });
});
