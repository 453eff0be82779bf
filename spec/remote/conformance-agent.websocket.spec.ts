/**
 * The conformance agent process behind `acp-wire serve`, driven over a raw WebSocket: the exact
 * lines of the stdio wire specs, one message per text frame. Needs dist/ (built when stale).
 */
import { expect } from 'chai';
import { CLIENT_INIT, INIT_RESULT } from '../helpers/conformance-agent';
import { CLI, CONFORMANCE_AGENT, spawnScript, useBuild, type SpawnedProcess } from '../helpers/processes';
import { connectRawWebSocket, type RawWebSocket } from './remote-helpers';

const CANCEL = (id: unknown): object => ({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
const CANCELLED = (id: unknown): string =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32800,"message":"Request cancelled"}}`;

describe('conformance agent over WebSocket (acp-wire serve)', () => {
  let serve: SpawnedProcess;
  let url: string;
  let socket: RawWebSocket;

  /** Sends one request frame and resolves with the next frame received. */
  async function request(id: unknown, method: string, params?: unknown): Promise<string> {
    socket.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return (await socket.lines.next())[0]!;
  }

  useBuild();
  before(async () => {
    serve = spawnScript(CLI, ['serve', `${process.execPath} ${CONFORMANCE_AGENT}`]);
    url = (await serve.stdout.take()).replace('listening ', '');
  });

  after(async () => {
    serve.child.kill('SIGTERM');
    expect((await serve.exited).code).to.equal(0);
  });

  beforeEach(async () => {
    socket = await connectRawWebSocket(url);
  });

  afterEach(async () => {
    expect(await socket.close()).to.deep.include({ code: 1000 });
  });

  it('refuses a request before initialize, then initializes with the exact v2 result', async () => {
    expect(await request(1, '_test/echo', [])).to.equal(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request","data":"`_test/echo` needs a completed initialize first"}}',
    );
    expect(await request(2, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":2,"result":${INIT_RESULT}}`);
  });

  describe('once initialized', () => {
    beforeEach(async () => {
      expect(await request(0, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":0,"result":${INIT_RESULT}}`);
    });

    it('_test/sleep answers -32800 at once when cancelled', async () => {
      socket.send({ jsonrpc: '2.0', id: 's', method: '_test/sleep', params: { ms: 60_000 } }, CANCEL('s'));
      expect(await socket.lines.next()).to.deep.equal([CANCELLED('s')]);
    });

    it('_test/sleep answers {"partial":true} when cancelled with onCancel "partial"', async () => {
      socket.send({ jsonrpc: '2.0', id: 'p', method: '_test/sleep', params: { ms: 60_000, onCancel: 'partial' } }, CANCEL('p'));
      expect(await socket.lines.next()).to.deep.equal(['{"jsonrpc":"2.0","id":"p","result":{"partial":true}}']);
    });

    it('_test/drop is answered -32603 by the library once the responder is collected', async () => {
      socket.send({ jsonrpc: '2.0', id: 1, method: '_test/drop' }, { jsonrpc: '2.0', id: 2, method: '_test/gc' });
      expect((await socket.lines.next(2)).sort()).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"request handler dropped its responder for `_test/drop`"}}',
        '{"jsonrpc":"2.0","id":2,"result":{"ok":true}}',
      ]);
    });

    it('_test/drop {afterMs} is answered -32800 when the peer had cancelled it', async () => {
      socket.send({ jsonrpc: '2.0', id: 1, method: '_test/drop', params: { afterMs: 20 } }, CANCEL(1));
      expect(await socket.lines.next()).to.deep.equal([CANCELLED(1)]);
    });

    it('_test/throw and _test/throwPlain answer exactly', async () => {
      expect(await request(1, '_test/throw', { code: -32001, message: 'Nope', data: { why: 'test' } })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Nope","data":{"why":"test"}}}',
      );
      expect(await request(2, '_test/throwPlain', { message: 'boom' })).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error","data":"Error: boom"}}',
      );
    });

    it('records notifications, cancels included, and stays up after _test/notifyThrow', async () => {
      socket.send({ jsonrpc: '2.0', method: '_test/notifyThrow' }, CANCEL('unknown'));
      expect(await request(1, '_test/received')).to.equal(
        '{"jsonrpc":"2.0","id":1,"result":{"notifications":[{"method":"_test/notifyThrow"},{"method":"$/cancel_request","params":{"requestId":"unknown"}}]}}',
      );
    });

    it('_test/callClient cancels its request to the client once, with the id it used', async () => {
      socket.send({ jsonrpc: '2.0', id: 9, method: '_test/callClient', params: { method: 'client/slow', cancelAfterMs: 1 } });
      const [call, cancel] = await socket.lines.next(2);
      const { id } = JSON.parse(call!) as { id: unknown };
      expect(call).to.equal(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"client/slow"}`);
      expect(cancel).to.equal(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${JSON.stringify(id)}}}`);
      socket.send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32800,"message":"Request cancelled"}}`);
      expect(await socket.lines.next()).to.deep.equal([
        '{"jsonrpc":"2.0","id":9,"result":{"response":{"code":-32800,"message":"Request cancelled"}}}',
      ]);
    });
  });
});
