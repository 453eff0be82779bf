/**
 * Backpressure on the sender's side: a sender can tell that its peer does not keep up and wait
 * for the output to drain, so what it has queued stays bounded however much it sends.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { Connection, ConnectionClosedError } from '../lib';

const LINE_PAD = 'x'.repeat(1024);

/** A connection whose output nobody reads until `startReading()`; counts the lines read then. */
function unreadPeer(): { connection: Connection; output: PassThrough; startReading(): void; lines(): string[] } {
  const input = new PassThrough();
  const output = new PassThrough();
  const connection = new Connection(input, output);
  const read: string[] = [];
  let partial = '';
  return {
    connection,
    output,
    startReading: () => {
      if (output.listenerCount('data') > 0) return;
      output.setEncoding('utf8');
      output.on('data', (text: string) => {
        const parts = (partial + text).split('\n');
        partial = parts.pop()!;
        read.push(...parts);
      });
    },
    lines: () => read,
  };
}

/** Sends 1 KiB notifications until the output needs drain. */
function fillOutput(connection: Connection): void {
  while (!connection.writableNeedDrain) connection.sendNotification('n', { pad: LINE_PAD });
}

describe('Connection backpressure for senders', () => {
  let peer: ReturnType<typeof unreadPeer>;
  beforeEach(() => {
    peer = unreadPeer();
  });
  afterEach(async () => {
    peer.startReading();
    await peer.connection.close();
  });

  describe('#writableNeedDrain', () => {
    it('is false while the output can take more, then true once the queued lines reach its high-water mark', () => {
      const { connection, output } = peer;
      expect(connection.writableNeedDrain).to.equal(false);
      connection.sendNotification('n', { pad: 'x' });
      expect(connection.writableNeedDrain).to.equal(false);
      let sent = 1;
      while (!connection.writableNeedDrain) {
        connection.sendNotification('n', { pad: LINE_PAD });
        sent++;
      }
      expect(connection.writableLength).to.be.at.least(output.writableHighWaterMark);
      expect(connection.writableLength).to.be.below(output.writableHighWaterMark + 2 * LINE_PAD.length);
      expect(sent).to.be.below(output.writableHighWaterMark / LINE_PAD.length + 2);
    });
  });

  describe('#drained()', () => {
    it('resolves at once while the output can take more', async () => {
      expect(peer.connection.writableNeedDrain).to.equal(false);
      await peer.connection.drained();
    });

    it("resolves and emits 'drain' once the peer reads, with writableNeedDrain false again", async () => {
      const { connection } = peer;
      fillOutput(connection);
      let drainEvents = 0;
      connection.on('drain', () => drainEvents++);
      const drained = connection.drained();
      peer.startReading();
      await drained;
      expect(connection.writableNeedDrain).to.equal(false);
      expect(drainEvents).to.equal(1);
    });

    it('rejects with ConnectionClosedError when the connection closes while it waits', async () => {
      const { connection } = peer;
      fillOutput(connection);
      const waiting = connection.drained().then(undefined, (error: unknown) => error);
      void connection.close();
      const error = await waiting;
      expect(error).to.be.instanceOf(ConnectionClosedError);
      expect(error).to.have.property('reason', 'closed locally');
    });

    it('rejects with the abort reason when its signal aborts, and at once for an aborted signal', async () => {
      const { connection } = peer;
      fillOutput(connection);
      const controller = new AbortController();
      const waiting = connection.drained({ signal: controller.signal }).then(undefined, (error: unknown) => error);
      const reason = new Error('give up');
      controller.abort(reason);
      expect(await waiting).to.equal(reason);
      expect(await connection.drained({ signal: AbortSignal.abort(reason) }).then(undefined, (error: unknown) => error)).to.equal(reason);
      expect(connection.listenerCount('drain')).to.equal(0);
      expect(connection.listenerCount('close')).to.equal(0);
    });

    it('throws TypeError for a signal that is not an AbortSignal', () => {
      expect(() => peer.connection.drained({ signal: {} as AbortSignal })).to.throw(TypeError, 'signal');
    });
  });

  it('keeps what is queued under one high-water mark and one line for a sender that awaits drained(), then delivers everything in order', async () => {
    const { connection, output } = peer;
    const COUNT = 20_000;
    const bound = output.writableHighWaterMark + 2 * (LINE_PAD.length + 64);
    let sent = 0;
    let maxQueued = 0;
    let blocked!: () => void;
    const firstBlock = new Promise<void>((resolve) => (blocked = resolve));
    const sender = (async () => {
      for (; sent < COUNT; ) {
        connection.sendNotification('n', { seq: sent++, pad: LINE_PAD });
        maxQueued = Math.max(maxQueued, connection.writableLength);
        if (connection.writableNeedDrain) blocked();
        await connection.drained();
      }
    })();
    await firstBlock;
    // The peer reads nothing: the sender waits instead of queuing 20 MiB.
    expect(sent).to.be.below(COUNT / 100);
    expect(connection.writableLength).to.be.at.most(bound);
    peer.startReading();
    await sender;
    await connection.close();
    const seqs = peer.lines().map((line) => (JSON.parse(line) as { params: { seq: number } }).params.seq);
    expect(seqs).to.have.length(COUNT);
    expect(seqs.every((seq, i) => seq === i)).to.equal(true);
    expect(maxQueued).to.be.at.most(bound);
  });
});
