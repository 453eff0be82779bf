/**
 * How a connection writes to a socket (a pipe, a child's stdio, TCP): the queue goes out every
 * 4 KiB, so that the process at the other end can start on a burst before it is all produced.
 * Other streams are written once a burst's lines reach their high-water mark (spec/connection.spec.ts, "writing").
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, createConnection, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { Connection } from '../../lib';
import { collectGarbage } from '../helpers/events';
import { LineReader } from '../helpers/lines';
import { isCancelFor } from '../helpers/messages';

const EARLY_WRITE_CHARS = 4 * 1024;

/** Two connected TCP sockets on 127.0.0.1; the listener is closed once they are. */
async function socketPair(): Promise<[Socket, Socket]> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const near = createConnection({ host: '127.0.0.1', port });
  const [[far]] = await Promise.all([accepted, once(near, 'connect')]);
  server.close();
  return [near, far];
}

/** Records the text of every `write()` made to `socket`, then writes it. */
function recordWrites(socket: Socket): string[] {
  const writes: string[] = [];
  const write = socket.write.bind(socket) as (chunk: string) => boolean;
  socket.write = ((chunk: string) => {
    writes.push(String(chunk));
    return write(chunk);
  }) as Socket['write'];
  return writes;
}

/** Sends a `work` request, lets go of it unconsumed and returns its id. */
function sendAndDrop(connection: Connection, params: unknown): number {
  return connection.sendRequest('work', params).id as number;
}

describe('Connection writing to a socket', () => {
  let sockets: Socket[] = [];
  beforeEach(async () => {
    sockets = await socketPair();
  });
  afterEach(async () => {
    await Promise.all(
      sockets.map((socket) => {
        const closed = once(socket, 'close');
        socket.destroy();
        return closed;
      }),
    );
  });

  it('writes the answers to a burst every 4 KiB, the first while the burst is still being dispatched', async () => {
    const [near, far] = sockets as [Socket, Socket];
    const input = new PassThrough();
    const writes = recordWrites(near);
    const connection = new Connection(input, near, { endOutputOnClose: false });
    const writesSeen: number[] = [];
    connection.onRequest('echo', (params: unknown) => {
      writesSeen.push(writes.length);
      return params;
    });
    const answers = new LineReader(far);
    try {
      const count = 100;
      const requests = Array.from({ length: count }, (_, id) => ({
        jsonrpc: '2.0',
        id,
        method: 'echo',
        params: { sessionId: 'sess_0123456789', id },
      }));
      input.write(requests.map((request) => `${JSON.stringify(request)}\n`).join(''));
      const lines = await answers.waitForLines(count);
      expect(lines.map((line) => (JSON.parse(line) as { id: number }).id)).to.deep.equal(requests.map(({ id }) => id));
      // Answers went out before the last request of the burst was even dispatched.
      expect(writesSeen[0]).to.equal(0);
      expect(writesSeen[count - 1]).to.be.greaterThan(0);
      // Every write but the last carries 4 KiB, at most one line more.
      const longestLine = Math.max(...lines.map((line) => line.length + 1));
      expect(writes.length).to.be.greaterThan(1);
      for (const chunk of writes.slice(0, -1)) expect(chunk.length).to.be.within(EARLY_WRITE_CHARS, EARLY_WRITE_CHARS + longestLine - 1);
      expect(writes.join('')).to.equal(lines.map((line) => `${line}\n`).join(''));
    } finally {
      await connection.close();
    }
  });

  it('still cancels a dropped request whose own line was written at once', async () => {
    const [near, far] = sockets as [Socket, Socket];
    const writes = recordWrites(near);
    const connection = new Connection(new PassThrough(), near, { endOutputOnClose: false });
    const received = new LineReader(far);
    try {
      const id = sendAndDrop(connection, { pad: 'x'.repeat(EARLY_WRITE_CHARS) });
      // Written in the call: the line alone reaches the early-write size.
      expect(writes).to.have.length(1);
      await received.waitForLines(1);
      await collectGarbage();
      const cancel = await received.findMessage(isCancelFor(id));
      expect(cancel.params).to.deep.equal({ requestId: id });
    } finally {
      await connection.close();
    }
  });
});
