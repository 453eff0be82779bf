/**
 * JSON-RPC 2.0 batches over the remote transports on ACP v2: one array of answers over a plain
 * WebSocket; over a resumable one each answer as a message of its own, so that each carries its
 * resumption cursor.
 */
import { expect } from 'chai';
import { listenRemote } from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { connectRawWebSocket, expectTcpHandles, tcpHandles } from './remote-helpers';

const BATCH = [
  { jsonrpc: '2.0', id: 2, method: '_test/echo', params: { b: 2 } },
  { jsonrpc: '2.0', id: 3, method: '_test/echo', params: { a: 1 } },
];

async function exchange(resume: boolean): Promise<unknown[]> {
  const baseline = tcpHandles();
  const listener = await listenRemote(resume ? { resume: { bufferMessages: 16, graceMs: 1000 } } : {}, (connection) =>
    serveConformanceAgent(connection),
  );
  const socket = await connectRawWebSocket(listener.url);
  try {
    socket.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } });
    await socket.lines.take();
    socket.send(BATCH);
    socket.send({ jsonrpc: '2.0', id: 4, method: '_test/echo', params: { after: true } });
    const lines = await socket.lines.takeUntil((m) => m.id === 4);
    return lines.map((line) => JSON.parse(line) as unknown);
  } finally {
    await socket.close();
    await listener.close();
    await expectTcpHandles(baseline);
  }
}

describe('batches over WebSocket (ACP v2)', () => {
  it('answers a batch with one array over a plain WebSocket', async () => {
    const [array, after] = await exchange(false);
    expect(array).to.deep.equal([
      { jsonrpc: '2.0', id: 2, result: { b: 2 } },
      { jsonrpc: '2.0', id: 3, result: { a: 1 } },
    ]);
    expect(after).to.deep.equal({ jsonrpc: '2.0', id: 4, result: { after: true } });
  });

  it('answers each entry as a message of its own, each with the next cursor, over a resumable WebSocket', async () => {
    const answers = (await exchange(true)) as { id: number; result: { _meta: Record<string, string> } }[];
    expect(answers.map((a) => [a.id, a.result._meta['acp/cursor']])).to.deep.equal([
      [2, '2'],
      [3, '3'],
      [4, '4'],
    ]);
  });
});
