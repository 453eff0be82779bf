import { expect } from 'chai';
import type { Readable, Writable } from 'node:stream';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { ChildConnection } from '../../lib';
import { track } from '../helpers/async';
import { spawnFaultPeer } from '../helpers/faults';
import { LineReader } from '../helpers/lines';
import { childClosed, useBuild } from '../helpers/processes';

/** The most a connection holds before it stops reading (lib/framing/backlog.ts). */
const BACKLOG_LIMIT = 16 * 1024 * 1024;
/** Node reads a pipe in chunks of at most 64 KiB. */
const CHUNK_BYTES = 64 * 1024;

interface FloodDone {
  answered: number;
  duplicates: number;
  wrong: number;
}

/** What a flood run observed on our side of the connection. */
interface Flood {
  peer: ChildConnection;
  /** Requests dispatched to our handler. */
  dispatched: () => number;
  /** Requests dispatched while our output's last write had returned false and not drained. */
  dispatchedWhileFull: () => number;
  /** Bytes read from the peer so far. */
  bytesRead: () => number;
  /** The bytes the peer floods, from its `flooding <bytes>` line. */
  total: Promise<number>;
  /** The peer's `flood/done` notification (rejects if the connection closes first). */
  done: Promise<FloodDone>;
}

/**
 * Spawns the flood peer (it writes `count` requests and reads nothing until SIGUSR2) and answers
 * each request with a string of the requested size.
 */
function flood(count: number, pad: number, answerBytes: number): Flood {
  const peer = spawnFaultPeer('flood', [String(count), String(pad), String(answerBytes)]);
  const stderr = new LineReader(peer.child.stderr!);
  const output = peer.child.stdin!;
  let dispatched = 0;
  let dispatchedWhileFull = 0;
  let bytesRead = 0;
  peer.connection.onRequest('big', ({ size }: { size: number }) => {
    dispatched++;
    if (output.writableNeedDrain) dispatchedWhileFull++;
    return 'x'.repeat(size);
  });
  // Registered after the connection's own listener: counts a chunk once the connection has seen it.
  peer.child.stdout!.on('data', (chunk: Buffer) => (bytesRead += chunk.length));
  const done = new Promise<FloodDone>((resolve, reject) => {
    peer.connection.onNotification('flood/done', resolve);
    // Fail fast rather than time out if the peer goes away first (after done, this does nothing).
    peer.connection.once('close', (reason) => reject(new Error(`closed before the flood was done: ${reason}`)));
  });
  const total = stderr.find((_, line) => line.startsWith('flooding ')).then((line) => Number(line.split(' ')[1]));
  return { peer, dispatched: () => dispatched, dispatchedWhileFull: () => dispatchedWhileFull, bytesRead: () => bytesRead, total, done };
}

/** Resolves once `count` bytes have come out of `stream`. */
function whenRead(stream: Readable, read: () => number, count: Promise<number>): Promise<void> {
  return count.then(
    (total) =>
      new Promise((resolve) => {
        if (read() >= total) return resolve();
        const onData = (): void => {
          if (read() < total) return;
          stream.removeListener('data', onData);
          resolve();
        };
        stream.on('data', onData);
      }),
  );
}

/** Resolves once `output.write()` has returned false and not drained (at once if that is so now). */
function whenFull(output: Writable): Promise<void> {
  if (output.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    const write = output.write;
    output.write = function (this: Writable, ...args: Parameters<Writable['write']>): boolean {
      const isOk = write.apply(this, args);
      if (!isOk) {
        output.write = write;
        resolve();
      }
      return isOk;
    } as Writable['write'];
  });
}

describe('Connection whose peer stops reading (backpressure)', function () {
  this.timeout(60_000);
  useBuild();

  describe('a peer that sends 2,000 requests with 16–32 KiB answers, then reads only later', () => {
    const COUNT = 2000;
    let run: Flood;
    let stall: { dispatched: number; outputFull: boolean };
    let done: FloodDone;
    let exit: { code: number | null; signal: NodeJS.Signals | null };

    before(async () => {
      run = flood(COUNT, 1024, 16 * 1024);
      await whenRead(run.peer.child.stdout!, run.bytesRead, run.total);
      // Everything the peer sent has been read; once a write reports the output full, it stays
      // full until the peer reads.
      await whenFull(run.peer.child.stdin!);
      stall = { dispatched: run.dispatched(), outputFull: run.peer.child.stdin!.writableNeedDrain };
      run.peer.child.kill('SIGUSR2');
      done = await run.done;
      exit = await childClosed(run.peer.child);
    });

    it('keeps reading its input while its output cannot drain', () => {
      expect(stall.outputFull).to.equal(true);
    });

    it('dispatches only the requests whose answers the output can take before it fills', () => {
      // The pipe (64 KiB) and the stream's buffer (16 KiB) hold about five 16 KiB answers.
      expect(stall.dispatched).to.be.greaterThan(0).and.at.most(16);
    });

    it('dispatches no request while its last write has not drained', () => {
      expect(run.dispatchedWhileFull()).to.equal(0);
    });

    it('answers every request exactly once when the peer reads again', () => {
      expect(done).to.deep.equal({ answered: COUNT, duplicates: 0, wrong: 0 });
      expect(run.dispatched()).to.equal(COUNT);
    });

    it('lets the peer exit 0 after the flood', () => {
      expect(exit).to.deep.equal({ code: 0, signal: null });
    });
  });

  describe('a peer that sends more than 16 MiB of requests and does not read', () => {
    const COUNT = 20_000;
    let run: Flood;
    let atPause: { bytesRead: number; dispatched: number };
    let bytesAtResume = -1;
    let done: FloodDone;

    before(async () => {
      run = flood(COUNT, 1024, 1024);
      const input = run.peer.child.stdout!;
      await new Promise<void>((resolve) => input.once('pause', () => resolve()));
      // The chunk being decoded when the limit was passed is finished first.
      await nextMacrotask();
      atPause = { bytesRead: run.bytesRead(), dispatched: run.dispatched() };
      input.once('resume', () => (bytesAtResume = run.bytesRead()));
      run.peer.child.kill('SIGUSR2');
      done = await run.done;
      await childClosed(run.peer.child);
    });

    it('stops reading once it holds more than 16 MiB', () => {
      expect(atPause.bytesRead)
        .to.be.greaterThan(BACKLOG_LIMIT)
        .and.at.most(BACKLOG_LIMIT + 4 * CHUNK_BYTES);
      expect(atPause.dispatched).to.be.below(COUNT / 10);
    });

    it('reads nothing more until it has dispatched enough of what it holds', () => {
      expect(bytesAtResume).to.equal(atPause.bytesRead);
    });

    it('answers every request exactly once when the peer reads again', () => {
      expect(done).to.deep.equal({ answered: COUNT, duplicates: 0, wrong: 0 });
    });
  });

  describe('two peers that flood each other with large requests at once', () => {
    it('answers every request on both sides (neither waits for the other to read)', async () => {
      const peer = spawnFaultPeer('agent');
      peer.child.stderr!.resume();
      try {
        peer.connection.onRequest('echo', (params) => params);
        const payload = 'm'.repeat(100_000);
        const ours = Array.from({ length: 20 }, () => track(peer.connection.sendRequest('echo', { payload })));
        const theirs = await peer.connection.sendRequest('floodBack', { n: 20, size: 100_000 });
        await Promise.all(ours.map((s) => s.done));
        expect(theirs).to.deep.equal({ answered: 20 });
        expect(ours.map((s) => s.outcome.status)).to.deep.equal(ours.map(() => 'resolved'));
      } finally {
        await peer.close();
      }
    });
  });
});
