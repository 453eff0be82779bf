/**
 * Backpressure across a hop: a connection whose messages are forwarded to a connection
 * whose peer does not read stops reading its own fast peer, so the hop's memory stays bounded and
 * the fast peer's writes back up. Bounds are asserted on queued and held bytes, never on time.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { Conductor, Connection, relayBackpressure, sendProxiedMessageTo } from '../lib';
import { heldInputBytes } from '../lib/connection/connection-hooks';

/** The most a connection holds before it stops reading (lib/framing/backlog.ts). */
const BACKLOG_LIMIT = 16 * 1024 * 1024;
const LINE_BYTES = 64 * 1024;
/** 64 MiB of 64 KiB notifications: four times the backlog limit. */
const COUNT = 1024;

/** The raw bytes of COUNT notifications `n` `{seq, pad}`, one line each. */
function floodLines(): string[] {
  const pad = 'x'.repeat(LINE_BYTES - 64);
  return Array.from({ length: COUNT }, (_, seq) => `{"jsonrpc":"2.0","method":"n","params":{"seq":${seq},"pad":"${pad}"}}\n`);
}

/** A stream nobody reads until `startReading()`; then collects the `seq` of each `n` line. */
function slowReader(stream: PassThrough): { startReading(): void; seqs: number[]; whenCount(n: number): Promise<void> } {
  const seqs: number[] = [];
  let partial = '';
  let waiter: { n: number; resolve(): void } | undefined;
  return {
    seqs,
    startReading: () => {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        const parts = (partial + text).split('\n');
        partial = parts.pop()!;
        for (const line of parts) seqs.push((JSON.parse(line) as { params: { seq: number } }).params.seq);
        if (waiter && seqs.length >= waiter.n) waiter.resolve();
      });
    },
    whenCount: (n) => (seqs.length >= n ? Promise.resolve() : new Promise((resolve) => (waiter = { n, resolve }))),
  };
}

/**
 * Writes the flood into `input` at once and resolves with what happened first: the reading
 * connection paused it (`'pause'`), or it read all of it (`'drain'` of the raw writable side).
 */
async function floodUntilPausedOrRead(input: PassThrough): Promise<'paused' | 'read everything'> {
  const lines = floodLines();
  const paused = once(input, 'pause').then(() => 'paused' as const);
  // A flowing PassThrough hands a written chunk to its reader synchronously: the whole flood may
  // be read (or the reader may pause) before the last write returns.
  let isPaused = false;
  input.once('pause', () => (isPaused = true));
  for (const line of lines) input.write(line);
  if (isPaused) return 'paused';
  if (unread(input) === 0) return 'read everything';
  const readAll = once(input, 'drain').then(() => 'read everything' as const);
  return Promise.race([paused, readAll]);
}

/** What the fast peer has written that the hop has not read yet. */
function unread(input: PassThrough): number {
  return input.writableLength + input.readableLength;
}

describe('relayBackpressure()', () => {
  let upIn: PassThrough;
  let downOut: PassThrough;
  let up: Connection;
  let down: Connection;
  let reader: ReturnType<typeof slowReader>;
  beforeEach(() => {
    upIn = new PassThrough();
    downOut = new PassThrough();
    up = new Connection(upIn, new PassThrough());
    down = new Connection(new PassThrough(), downOut);
    up.onAnyNotification((params, message) => sendProxiedMessageTo(down, params, message));
    reader = slowReader(downOut);
  });
  afterEach(async () => {
    if (downOut.listenerCount('data') === 0) reader.startReading();
    upIn.end();
    await Promise.all([up.close(), down.close()]);
  });

  it('stops reading the fast side while the next hop is full, holding at most the backlog limit, then delivers everything in order', async () => {
    relayBackpressure(up, down);
    expect(await floodUntilPausedOrRead(upIn)).to.equal('paused');
    const total = COUNT * LINE_BYTES;
    const held = heldInputBytes(up);
    expect(held).to.be.at.most(BACKLOG_LIMIT + LINE_BYTES);
    // The downstream output holds one high-water mark and the line that crossed it, the pipe (a
    // PassThrough here) one more of each.
    expect(down.writableLength).to.be.at.most(downOut.writableHighWaterMark + LINE_BYTES);
    expect(unread(upIn)).to.be.at.least(total - held - 4 * LINE_BYTES - downOut.writableHighWaterMark - downOut.readableHighWaterMark);
    reader.startReading();
    await reader.whenCount(COUNT);
    expect(reader.seqs.every((seq, i) => seq === i)).to.equal(true);
  });

  it('without it, the hop reads everything and queues it for the peer that does not read', async () => {
    expect(await floodUntilPausedOrRead(upIn)).to.equal('read everything');
    expect(down.writableLength).to.be.above(COUNT * LINE_BYTES - BACKLOG_LIMIT);
  });

  it('ends when disposed: the hop reads on', async () => {
    relayBackpressure(up, down).dispose();
    expect(await floodUntilPausedOrRead(upIn)).to.equal('read everything');
  });

  it('throws TypeError for something that is not a Connection', () => {
    expect(() => relayBackpressure(up, {} as Connection)).to.throw(TypeError, 'to must be a Connection');
  });
});

describe('Conductor backpressure', () => {
  it('stops reading its client while the agent does not read, holding at most the backlog limit', async () => {
    const clientIn = new PassThrough();
    const client = new Connection(clientIn, new PassThrough());
    const agentOut = new PassThrough();
    const agent = new Connection(new PassThrough(), agentOut);
    const conductor = new Conductor({ client, components: [{ connection: agent }] });
    const reader = slowReader(agentOut);
    try {
      expect(await floodUntilPausedOrRead(clientIn)).to.equal('paused');
      const held = heldInputBytes(client);
      expect(held).to.be.at.most(BACKLOG_LIMIT + LINE_BYTES);
      expect(agent.writableLength).to.be.at.most(agentOut.writableHighWaterMark + LINE_BYTES);
      expect(unread(clientIn)).to.be.at.least(COUNT * LINE_BYTES - held - 4 * LINE_BYTES - 2 * agentOut.writableHighWaterMark);
      reader.startReading();
      await reader.whenCount(COUNT);
      expect(reader.seqs.every((seq, i) => seq === i)).to.equal(true);
    } finally {
      if (agentOut.listenerCount('data') === 0) reader.startReading();
      clientIn.end();
      await conductor.close();
    }
  });
});
