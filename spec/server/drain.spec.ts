/**
 * Draining a server's clients: ClientPool.drain() waits for each client's work in flight
 * (LineWorkTracker for relayed lines, a Connection's own requests for listenRemote) up to a deadline.
 */
import { expect } from 'chai';
import { ClientPool, LineWorkTracker } from '../../lib/hosting';
import { RpcError, connectWebSocket, listenRemote, type Connection, type RemoteListener } from '../../lib';
import { rejectionOf } from '../helpers/async';

/** Resolves once `connection` has closed. */
function closed(connection: Connection): Promise<unknown> {
  return connection.isClosed ? Promise.resolve() : new Promise((resolve) => connection.once('close', resolve));
}

/** A JSON-RPC message as one NDJSON line of bytes. */
const line = (message: object): Buffer => Buffer.from(`${JSON.stringify(message)}\n`);

describe('LineWorkTracker', () => {
  it('is busy from a request line until the other side answers its id', async () => {
    const work = new LineWorkTracker();
    work.fromClient(line({ jsonrpc: '2.0', id: 'a', method: 'session/prompt' }));
    expect(work.isBusy).to.equal(true);
    const idle = work.whenIdle();
    work.toClient(line({ jsonrpc: '2.0', method: 'session/update', params: {} }));
    work.toClient(line({ jsonrpc: '2.0', id: 'b', result: {} }));
    expect(work.isBusy).to.equal(true);
    work.toClient(line({ jsonrpc: '2.0', id: 'a', result: {} }));
    expect(work.isBusy).to.equal(false);
    await idle;
  });

  it("counts the peer's requests to the client, and lines split across chunks", () => {
    const work = new LineWorkTracker();
    const request = line({ jsonrpc: '2.0', id: 7, method: 'fs/read_text_file' });
    work.toClient(request.subarray(0, 10));
    expect(work.isBusy).to.equal(false);
    work.toClient(request.subarray(10));
    expect(work.isBusy).to.equal(true);
    work.fromClient('not json\n');
    work.fromClient(line({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'no' } }));
    expect(work.isBusy).to.equal(false);
  });
});

describe('ClientPool#drain()', () => {
  let listener: RemoteListener | undefined;
  afterEach(async () => {
    await listener?.close();
    listener = undefined;
  });

  /** A listenRemote server whose `hold` requests are answered when `release()` is called. */
  async function holdingServer(): Promise<{ listener: RemoteListener; release(): void }> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = await listenRemote({}, (connection) => {
      connection.onRequest('hold', async () => {
        await released;
        return 'done';
      });
      connection.onRequest('ping', () => 'pong');
    });
    return { listener: server, release };
  }

  it('refuses new clients, closes an idle client at once and a busy one once its request is answered', async () => {
    const server = await holdingServer();
    listener = server.listener;
    const idle = await connectWebSocket(listener.url);
    const busy = await connectWebSocket(listener.url);
    expect(await idle.sendRequest('ping')).to.equal('pong');
    const holding = busy.sendRequest('hold');
    expect(await busy.sendRequest('ping')).to.equal('pong');
    expect(listener.health).to.equal('ready');
    const drained = listener.drain({ timeoutMs: 60_000 });
    expect(listener.health).to.equal('draining');
    await closed(idle);
    expect(busy.isClosed).to.equal(false);
    expect(await rejectionOf(connectWebSocket(listener.url))).to.have.property('status', 503);
    server.release();
    expect(await holding).to.equal('done');
    expect(await drained).to.deep.equal({ clients: 2, cut: 0 });
    await closed(busy);
  });

  it("cuts a busy client at the deadline and emits 'cut'", async () => {
    const server = await holdingServer();
    listener = server.listener;
    const busy = await connectWebSocket(listener.url);
    const holding = busy.sendRequest('hold');
    expect(await busy.sendRequest('ping')).to.equal('pong');
    const cut: unknown[] = [];
    listener.pool.on('cut', (client) => cut.push(client));
    expect(await listener.drain({ timeoutMs: 0 })).to.deep.equal({ clients: 1, cut: 1 });
    expect(cut).to.have.length(1);
    expect(await rejectionOf(holding)).to.not.be.instanceOf(RpcError);
    server.release();
  });

  it('answers full at maxClients, and validates timeoutMs', async () => {
    listener = await listenRemote({ maxClients: 1 }, () => {});
    const client = await connectWebSocket(listener.url);
    expect(listener.health).to.equal('full');
    await client.close();
    expect(() => new ClientPool().drain({ timeoutMs: -1 })).to.throw(RangeError, /timeoutMs/);
  });
});
