/**
 * The acknowledgements of a resumable WebSocket: when each side sends one, their exact text, and
 * reading them back without a parse — which must never read a frame differently from the parse.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebSocketServer } from 'ws';
import { connectWebSocket, type Connection } from '../../lib';
import { AckSchedule, cursorAckText, readCursorAck, readReceivedAck, receivedAckText } from '../../lib/transports/remote/resume/stream-ack';
import { STREAM_ACK_METHOD, controlMessage } from '../../lib/transports/remote/resume/control-messages';
import { seededRandom } from '../helpers/random';
import { expectTcpHandles, tcpHandles } from './remote-helpers';

const VALUES = [0, 1, 9, 10, 256, 12_345, 999_999_999_999_999, Number.MAX_SAFE_INTEGER];

describe('AckSchedule (when a resumable WebSocket side acknowledges)', () => {
  it('is due at every 256th small message, and not before', () => {
    const schedule = new AckSchedule();
    const due: number[] = [];
    for (let n = 1; n <= 1100; n++) if (schedule.received(100)) due.push(n);
    expect(due).to.deep.equal([256, 512, 768, 1024]);
  });

  it('is due sooner once the messages since the last acknowledgement reach 1 MiB, and counts again from there', () => {
    const schedule = new AckSchedule();
    const due: number[] = [];
    for (let n = 1; n <= 8; n++) if (schedule.received(300 * 1024)) due.push(n);
    expect(due).to.deep.equal([4, 8]);
    expect(schedule.received(1024 * 1024)).to.equal(true);
  });
});

describe('stream/ack texts', () => {
  it('are written byte for byte as the control message they are', () => {
    for (const n of VALUES) {
      expect(receivedAckText(n)).to.equal(controlMessage(STREAM_ACK_METHOD, { received: n }));
      expect(cursorAckText(n)).to.equal(controlMessage(STREAM_ACK_METHOD, { cursor: String(n) }));
    }
  });

  it('are read back as the number written, each only by its own reader; 16 digits are left to the parse', () => {
    for (const n of VALUES) {
      const expected = String(n).length <= 15 ? n : -1;
      expect(readReceivedAck(Buffer.from(receivedAckText(n)))).to.equal(expected);
      expect(readCursorAck(Buffer.from(cursorAckText(n)))).to.equal(expected);
      expect(readReceivedAck(Buffer.from(cursorAckText(n)))).to.equal(-1);
      expect(readCursorAck(Buffer.from(receivedAckText(n)))).to.equal(-1);
    }
  });

  it('are not read from any other frame, even one the parse would take as an acknowledgement', () => {
    const others = [
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received": 3}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":3} }',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":3}}\n',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":3,"x":1}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":03}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":-3}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":3.5}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":1234567890123456}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":"3"}}',
      '{"jsonrpc":"2.0","method":"stream/acks","params":{"received":3}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received":3}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"received"',
    ];
    for (const text of others) expect(readReceivedAck(Buffer.from(text)), text).to.equal(-1);
    const cursors = [
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"cursor":3}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"cursor":"03"}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"cursor":""}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"cursor":"3x"}}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"cursor":"3"},"id":1}',
      '{"jsonrpc":"2.0","method":"stream/ack","params":{"cursor":"3"}}}',
    ];
    for (const text of cursors) expect(readCursorAck(Buffer.from(text)), text).to.equal(-1);
  });

  it('read a changed frame either as the parse reads it or not at all (seeded one-byte changes)', () => {
    const random = seededRandom(23);
    const alphabet = '0123456789"{}:, x-.\\';
    let read = 0;
    for (let trial = 0; trial < 20_000; trial++) {
      const isCursor = random() < 0.5;
      const n = Math.floor(random() * 10 ** Math.floor(random() * 16));
      const text = isCursor ? cursorAckText(n) : receivedAckText(n);
      const at = Math.floor(random() * text.length);
      const byte = alphabet[Math.floor(random() * alphabet.length)]!;
      const cut = random();
      const changed =
        cut < 0.4
          ? text.slice(0, at) + byte + text.slice(at + 1)
          : cut < 0.8
            ? text.slice(0, at) + byte + text.slice(at)
            : text.slice(0, at) + text.slice(at + 1);
      const got = isCursor ? readCursorAck(Buffer.from(changed)) : readReceivedAck(Buffer.from(changed));
      if (got === -1) continue;
      read++;
      const params = (JSON.parse(changed) as { method: string; params: Record<string, unknown> }).params;
      expect(params, changed).to.deep.equal(isCursor ? { cursor: String(got) } : { received: got });
      expect(changed, changed).to.equal(isCursor ? cursorAckText(got) : receivedAckText(got));
    }
    // Changes inside the digits still read (as the parse does): the check above ran.
    expect(read).to.be.greaterThan(1000);
  });
});

describe("A reconnecting client takes the server's stream/ack however it is written", () => {
  let baseline: number;
  let server: WebSocketServer;
  let client: Connection | undefined;

  beforeEach(async () => {
    baseline = tcpHandles();
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    server.on('headers', (headers) => headers.push('Acp-Connection-Id: c1'));
    await once(server, 'listening');
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    for (const socket of server.clients) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
    await expectTcpHandles(baseline);
  });

  const acks = {
    'as acp-wire writes it': receivedAckText(1),
    'with a space the parse allows': '{"jsonrpc":"2.0","method":"stream/ack","params":{"received": 1}}',
  };
  for (const [how, ack] of Object.entries(acks)) {
    it(`${how}: as the transport's, never as a notification of the agent's`, async () => {
      server.on('connection', (socket) => {
        socket.on('message', (data) => {
          const request = JSON.parse(String(data)) as { id?: number; method?: string };
          if (request.method !== 'initialize') return;
          const capabilities = { transport: { resumable: { retentionMessages: 10, retentionSeconds: 10 } } };
          socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { protocolVersion: 2, agentCapabilities: capabilities } }));
          socket.send(ack);
          socket.send('{"jsonrpc":"2.0","method":"_test/after","params":{}}');
        });
      });
      const { port } = server.address() as AddressInfo;
      client = await connectWebSocket(`ws://127.0.0.1:${port}/`, { heartbeat: false, reconnect: {} });
      const seen: string[] = [];
      client.onNotification(STREAM_ACK_METHOD, () => void seen.push(STREAM_ACK_METHOD));
      const after = new Promise<void>((resolve) => client!.onNotification('_test/after', () => resolve()));
      await client.sendRequest('initialize', { protocolVersion: 2 });
      await after;
      expect(seen).to.deep.equal([]);
    });
  }
});
