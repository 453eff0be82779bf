/**
 * The resumable WebSocket's wire, frame by frame, with a raw `ws` client: the capability in the
 * `initialize` answer, the cursor on each agent message, `stream/ack`, `stream/resume` answered
 * by `stream/resumed` and the replay, or by `stream/resume_failed` and a close.
 */
import { expect } from 'chai';
import { listenRemote, type RemoteListener } from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { connectRawWebSocket, expectTcpHandles, tcpHandles, type RawWebSocket } from './remote-helpers';

/**
 * A resumable listener started before each test of the enclosing `describe` (with `handler`), the
 * raw sockets its tests open, and, after each, all of them closed with no TCP handle left.
 */
function useWireBench(bufferMessages: number | undefined, handler: Parameters<typeof listenRemote>[1]) {
  let baseline: number;
  let listener: RemoteListener;
  const sockets: RawWebSocket[] = [];
  beforeEach(async () => {
    baseline = tcpHandles();
    listener = await listenRemote({ resume: { bufferMessages, graceMs: 5000 } }, handler);
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
    await listener.close();
    await expectTcpHandles(baseline);
  });
  return {
    listener: (): RemoteListener => listener,
    open: async (): Promise<RawWebSocket> => {
      const socket = await connectRawWebSocket(listener.url);
      sockets.push(socket);
      return socket;
    },
  };
}

describe('Resumable WebSocket wire (raw client)', () => {
  let connectionId: string;
  const bench = useWireBench(4, (connection, info) => {
    connectionId = info.connectionId;
    serveConformanceAgent(connection);
  });
  const open = bench.open;
  const parse = (line: string): Record<string, unknown> => JSON.parse(line) as Record<string, unknown>;

  it('stamps each agent message with its cursor, advertises the capability, and acknowledges every 256 client messages', async () => {
    const socket = await open();
    socket.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } });
    const init = parse(await socket.lines.take());
    expect(init).to.deep.include({ id: 1 });
    const result = init.result as { _meta: unknown; agentCapabilities: { transport: unknown } };
    expect(result._meta).to.deep.equal({ 'acp/cursor': '1' });
    expect(result.agentCapabilities.transport).to.deep.equal({ resumable: { retentionMessages: 4, retentionSeconds: 300 } });
    for (let i = 0; i < 255; i++) socket.send({ jsonrpc: '2.0', method: '_test/note', params: { i } });
    socket.send({ jsonrpc: '2.0', id: 2, method: '_test/echo', params: { x: 1 } });
    expect(parse(await socket.lines.take())).to.deep.equal({ jsonrpc: '2.0', method: 'stream/ack', params: { received: 256 } });
    expect(parse(await socket.lines.take())).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { _meta: { 'acp/cursor': '2' }, x: 1 } });
  });

  it('acknowledges sooner once the client messages since the last acknowledgement reach 1 MiB', async () => {
    const socket = await open();
    socket.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } });
    await socket.lines.take();
    socket.send({ jsonrpc: '2.0', method: '_test/note', params: { text: 'x'.repeat(600_000) } });
    socket.send({ jsonrpc: '2.0', id: 2, method: '_test/echo', params: {} });
    expect(parse(await socket.lines.take())).to.deep.include({ id: 2 });
    socket.send({ jsonrpc: '2.0', method: '_test/note', params: { text: 'x'.repeat(600_000) } });
    expect(parse(await socket.lines.take())).to.deep.equal({ jsonrpc: '2.0', method: 'stream/ack', params: { received: 4 } });
  });

  it('resumes on a new socket: stream/resumed with the count received, then every message after the cursor', async () => {
    const first = await open();
    first.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } });
    await first.lines.take();
    first.ws.terminate();
    await first.closed;
    const second = await open();
    second.send({ jsonrpc: '2.0', method: 'stream/resume', params: { connectionId, cursor: null } });
    expect(parse(await second.lines.take())).to.deep.equal({ jsonrpc: '2.0', method: 'stream/resumed', params: { received: 1 } });
    expect(parse(await second.lines.take())).to.deep.include({ id: 1 });
    second.send({ jsonrpc: '2.0', id: 2, method: '_test/echo', params: {} });
    expect(parse(await second.lines.take())).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { _meta: { 'acp/cursor': '2' } } });
    expect(bench.listener().clientCount).to.equal(1);
  });

  it("takes the client's stream/ack {cursor}: lets go of the messages up to it, and does not count it as a client message", async () => {
    const first = await open();
    first.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } });
    for (let id = 2; id <= 3; id++) first.send({ jsonrpc: '2.0', id, method: '_test/echo', params: {} });
    await first.lines.takeLines(3);
    first.send({ jsonrpc: '2.0', method: 'stream/ack', params: { cursor: '2' } });
    first.send({ jsonrpc: '2.0', id: 4, method: '_test/echo', params: {} });
    expect(parse(await first.lines.take())).to.deep.equal({ jsonrpc: '2.0', id: 4, result: { _meta: { 'acp/cursor': '4' } } });
    first.ws.terminate();
    await first.closed;
    // The client said it has cursors 1 and 2: a resume before them is refused.
    const early = await open();
    early.send({ jsonrpc: '2.0', method: 'stream/resume', params: { connectionId, cursor: '1' } });
    expect(parse(await early.lines.take())).to.deep.include({ method: 'stream/resume_failed' });
    await early.closed;
    const second = await open();
    second.send({ jsonrpc: '2.0', method: 'stream/resume', params: { connectionId, cursor: '2' } });
    // Four client messages applied: the acknowledgement is not one of them.
    expect(parse(await second.lines.take())).to.deep.equal({ jsonrpc: '2.0', method: 'stream/resumed', params: { received: 4 } });
    expect((await second.lines.takeLines(2)).map((line) => parse(line).id)).to.deep.equal([3, 4]);
  });

  it('refuses a cursor no longer held, and an unknown connection, with stream/resume_failed, then closes', async () => {
    const first = await open();
    first.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } });
    for (let id = 2; id <= 6; id++) first.send({ jsonrpc: '2.0', id, method: '_test/echo', params: {} });
    await first.lines.takeLines(6);
    first.ws.terminate();
    await first.closed;
    const late = await open();
    late.send({ jsonrpc: '2.0', method: 'stream/resume', params: { connectionId, cursor: '1' } });
    const refusal = parse(await late.lines.take());
    expect(refusal).to.deep.include({ method: 'stream/resume_failed' });
    expect((refusal.params as { reason: string }).reason).to.match(/no longer held/);
    expect((await late.closed).code).to.equal(1000);
    const stranger = await open();
    stranger.send({ jsonrpc: '2.0', method: 'stream/resume', params: { connectionId: 'nobody', cursor: '1' } });
    expect(parse(await stranger.lines.take())).to.deep.equal({
      jsonrpc: '2.0',
      method: 'stream/resume_failed',
      params: { reason: 'unknown connection' },
    });
    // A cursor still held resumes the same connection.
    const good = await open();
    good.send({ jsonrpc: '2.0', method: 'stream/resume', params: { connectionId, cursor: '5' } });
    expect(parse(await good.lines.take())).to.deep.equal({ jsonrpc: '2.0', method: 'stream/resumed', params: { received: 6 } });
    expect(parse(await good.lines.take())).to.deep.equal({ jsonrpc: '2.0', id: 6, result: { _meta: { 'acp/cursor': '6' } } });
  });
});

describe('Resumable WebSocket wire: cursors of an in-process agent (raw client)', () => {
  let connectionId: string;
  const { open } = useWireBench(undefined, (connection, info) => {
    connectionId = info.connectionId;
    connection.onRequest('initialize', () => ({ protocolVersion: 2, capabilities: {} }));
    connection.onRequest('mix', () => {
      connection.sendNotification('n/own-meta', { _meta: { trace: 't' }, a: 1 });
      connection.sendNotification('n/array', [1, 2]);
      connection.sendNotification('n/plain', { b: 2 });
      return { done: true };
    });
  });

  /** Where the stamp put the cursor: params/result `_meta` for objects, else the message's own. */
  const cursorOf = (message: Record<string, unknown>): unknown => {
    const holder = [message.params, message.result].find((value) => typeof value === 'object' && value !== null && !Array.isArray(value));
    return ((holder ?? message) as { _meta?: Record<string, unknown> })._meta?.['acp/cursor'];
  };

  it('numbers every message in the order sent, whether stamped as serialized or spliced after, and replays them as sent', async () => {
    const first = await open();
    first.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } });
    first.send({ jsonrpc: '2.0', id: 2, method: 'mix', params: {} });
    first.send({ jsonrpc: '2.0', id: 3, method: 'no/such-method' });
    const lines: string[] = [];
    for (let i = 0; i < 6; i++) lines.push(await first.lines.take());
    const messages = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(messages.map(cursorOf)).to.deep.equal(['1', '2', '3', '4', '5', '6']);
    expect(messages[1]).to.deep.equal({ jsonrpc: '2.0', method: 'n/own-meta', params: { _meta: { 'acp/cursor': '2', trace: 't' }, a: 1 } });
    expect(messages[2]).to.deep.equal({ jsonrpc: '2.0', method: 'n/array', params: [1, 2], _meta: { 'acp/cursor': '3' } });
    expect(messages[3]).to.deep.equal({ jsonrpc: '2.0', method: 'n/plain', params: { _meta: { 'acp/cursor': '4' }, b: 2 } });
    expect(messages[4]).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { _meta: { 'acp/cursor': '5' }, done: true } });
    expect(messages[5]).to.deep.include({ id: 3, _meta: { 'acp/cursor': '6' } });
    first.ws.terminate();
    await first.closed;
    const second = await open();
    second.send({ jsonrpc: '2.0', method: 'stream/resume', params: { connectionId, cursor: '2' } });
    expect(JSON.parse(await second.lines.take())).to.deep.equal({ jsonrpc: '2.0', method: 'stream/resumed', params: { received: 3 } });
    for (const line of lines.slice(2)) expect(await second.lines.take()).to.equal(line);
  });
});
