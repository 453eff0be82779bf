/**
 * The conformance agent in TCP mode (`--tcp 0`): the `listening PORT` line, one agent state per
 * socket, a subset of the methods with exact lines, and a clean exit when its stdin ends.
 * Needs dist/: useBuild() builds it when it is missing or stale.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { CLIENT_INIT, IdNamer, INIT_RESULT, spawnAgent } from '../helpers/conformance-agent';
import { type SpawnedProcess, useBuild } from '../helpers/processes';
import { connectRaw, type RawSocket } from '../helpers/sockets';

describe('conformance agent (TCP)', () => {
  let agent: SpawnedProcess;
  let port: number;
  const sockets: Socket[] = [];

  async function connectInitialized(): Promise<RawSocket> {
    const peer = await connectRaw(port);
    sockets.push(peer.socket);
    expect(await peer.request(1, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`);
    return peer;
  }

  useBuild();

  beforeEach(async () => {
    agent = spawnAgent(['--tcp', '0']);
    const line = await agent.stdout.take();
    expect(line).to.match(/^listening \d+$/);
    port = Number(line.split(' ')[1]);
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    const exit = await agent.stop();
    expect(exit, agent.stderr.text).to.deep.equal({ code: 0, signal: null });
  });

  it('prints "listening PORT" with the port it picked, and nothing else on stdout', async () => {
    await connectInitialized();
    agent.child.stdin!.end();
    expect(await agent.stdout.ended()).to.deep.equal([]);
    expect(port).to.be.above(0);
  });

  it('keeps one agent state per socket', async () => {
    const first = await connectInitialized();
    first.send({ jsonrpc: '2.0', method: '_only_first' });
    const second = await connectRaw(port);
    sockets.push(second.socket);
    expect(await second.request(1, '_test/echo', [])).to.equal(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request","data":"`_test/echo` needs a completed initialize first"}}',
    );
    expect(await second.request(2, 'initialize', CLIENT_INIT)).to.equal(`{"jsonrpc":"2.0","id":2,"result":${INIT_RESULT}}`);
    expect(await second.request(3, '_test/received')).to.equal('{"jsonrpc":"2.0","id":3,"result":{"notifications":[]}}');
    expect(await first.request(2, '_test/received')).to.equal(
      '{"jsonrpc":"2.0","id":2,"result":{"notifications":[{"method":"_only_first"}]}}',
    );
  });

  it('answers _test/echo and a cancelled _test/sleep with exact lines', async () => {
    const peer = await connectInitialized();
    expect(await peer.request(2, '_test/echo', { over: 'tcp' })).to.equal('{"jsonrpc":"2.0","id":2,"result":{"over":"tcp"}}');
    peer.send({ jsonrpc: '2.0', id: 3, method: '_test/sleep', params: { ms: 60_000 } });
    peer.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 3 } });
    expect(await peer.lines.take()).to.equal('{"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"Request cancelled"}}');
  });

  it('runs a session turn with the same lines as over stdio', async () => {
    const peer = await connectInitialized();
    const names = new IdNamer();
    expect(names.name(await peer.request(2, 'session/new', { cwd: '/tmp', mcpServers: [] }))).to.equal(
      '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"<id1>"}}',
    );
    peer.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'session/prompt',
      params: { sessionId: names.idOf('<id1>'), prompt: [{ type: 'text', text: 'tcp' }] },
    });
    const update = (json: string): string => `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<id1>","update":${json}}}`;
    expect(names.names(await peer.lines.takeLines(6))).to.deep.equal([
      '{"jsonrpc":"2.0","id":3,"result":{"messageId":"<id2>"}}',
      update('{"sessionUpdate":"user_message","messageId":"<id2>","content":[{"type":"text","text":"tcp"}]}'),
      update('{"sessionUpdate":"state_update","state":"running"}'),
      update('{"sessionUpdate":"agent_message_chunk","messageId":"<id3>","content":{"type":"text","text":"echo: "}}'),
      update('{"sessionUpdate":"agent_message_chunk","messageId":"<id3>","content":{"type":"text","text":"tcp"}}'),
      update('{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}'),
    ]);
  });

  it("writes a socket's last answers before closing it when the client ends its side", async () => {
    const peer = await connectRaw(port);
    const { socket } = peer;
    sockets.push(socket);
    peer.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: CLIENT_INIT });
    peer.send({ jsonrpc: '2.0', id: 2, method: '_test/echo', params: ['last'] });
    socket.end();
    expect(await peer.lines.ended()).to.deep.equal([
      `{"jsonrpc":"2.0","id":1,"result":${INIT_RESULT}}`,
      '{"jsonrpc":"2.0","id":2,"result":["last"]}',
    ]);
  });

  it('exits 0 when its stdin ends, after writing the answer still queued for an open socket', async () => {
    const peer = await connectInitialized();
    const socket = sockets[0];
    const big = 'x'.repeat(8 * 1024 * 1024);
    const expected = `{"jsonrpc":"2.0","id":2,"result":["${big}"]}\n`;
    let received = '';
    socket.removeAllListeners('data');
    socket.setEncoding('utf8');
    peer.send({ jsonrpc: '2.0', id: 2, method: '_test/echo', params: [big] });
    // The first bytes of the answer mean the whole line is queued in the agent: stop reading, so
    // the rest waits in its buffers, and end its stdin.
    const [first] = (await once(socket, 'data')) as [string];
    socket.pause();
    received += first;
    agent.child.stdin!.end();
    socket.on('data', (chunk: string) => (received += chunk));
    socket.resume();
    await once(socket, 'end');
    expect(received.length).to.equal(expected.length);
    expect(received === expected).to.equal(true);
    expect(await agent.exited).to.deep.equal({ code: 0, signal: null });
  });
});
