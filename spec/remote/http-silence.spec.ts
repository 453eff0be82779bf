/**
 * The silence watch of a resumable Streamable HTTP client: one timer that gives up the requests
 * of a silent network.
 */
import { expect } from 'chai';
import { SilenceWatch, type WatchedRequest } from '../../lib/transports/remote/http/http-silence';

/** A request whose socket's counters the test moves, recording how it was given up. */
class FakeRequest implements WatchedRequest {
  socket: { bytesRead: number; bytesWritten: number; writableLength: number } | null = {
    bytesRead: 0,
    bytesWritten: 0,
    writableLength: 0,
  };
  /** Whether the request has been handed to the system entirely (an event stream's GET: at once). */
  writableFinished = false;
  error: Error | undefined;
  readonly destroyed: Promise<Error>;
  #onDestroy!: (error: Error) => void;

  constructor() {
    this.destroyed = new Promise((resolve) => (this.#onDestroy = resolve));
  }

  destroy(error: Error): void {
    this.error ??= error;
    this.#onDestroy(error);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('SilenceWatch (a resumable HTTP client in a silent network)', function () {
  const SILENCE_MS = 200;
  let watch: SilenceWatch | undefined;
  /** Timers that move a fake socket's counters: cleared even when a test fails waiting. */
  const movers: NodeJS.Timeout[] = [];
  afterEach(() => {
    watch?.stop();
    for (const mover of movers.splice(0)) clearInterval(mover);
  });
  // A request is given up within 1.25 × SILENCE_MS of silence: a watch that never gives it up fails here.
  this.timeout(10 * SILENCE_MS);

  it('gives up a request whose socket moves no byte for silenceMs, naming the silence', async () => {
    const request = new FakeRequest();
    watch = new SilenceWatch(SILENCE_MS, [request]);
    watch.start();
    const error = await request.destroyed;
    expect(error.message).to.equal(`nothing received for ${SILENCE_MS} ms`);
  });

  it('keeps a request whose socket reads, or (while it is being sent) hands its bytes to the system, and gives it up once that stops', async () => {
    const reading = new FakeRequest();
    const sending = new FakeRequest();
    watch = new SilenceWatch(SILENCE_MS, [reading, sending]);
    watch.start();
    const mover = setInterval(() => {
      reading.socket!.bytesRead += 10;
      // Queued bytes count only once they leave the socket's own queue.
      sending.socket!.bytesWritten += 10;
      sending.socket!.writableLength = sending.socket!.writableLength === 0 ? 10 : 0;
    }, 10);
    try {
      await sleep(3 * SILENCE_MS);
      expect(reading.error).to.equal(undefined);
      expect(sending.error).to.equal(undefined);
    } finally {
      clearInterval(mover);
    }
    await Promise.all([reading.destroyed, sending.destroyed]);
  });

  it('once the request is sent, counts only what the server sends: our own writes reaching the system keep nothing', async () => {
    const stream = new FakeRequest();
    stream.writableFinished = true;
    watch = new SilenceWatch(SILENCE_MS, [stream]);
    watch.start();
    // What else goes out on its socket (into a silent network, the system takes it until its buffers fill).
    movers.push(setInterval(() => void (stream.socket!.bytesWritten += 10), 10));
    const error = await stream.destroyed;
    expect(error.message).to.equal(`nothing received for ${SILENCE_MS} ms`);
  });

  it('does not count bytes queued in the socket as sent: a write the network never takes is given up', async () => {
    const request = new FakeRequest();
    watch = new SilenceWatch(SILENCE_MS, [request]);
    watch.start();
    const queue = setInterval(() => {
      request.socket!.bytesWritten += 10;
      request.socket!.writableLength += 10;
    }, 10);
    try {
      await request.destroyed;
    } finally {
      clearInterval(queue);
    }
  });

  it('leaves a request that has no socket yet, and looks no more once stopped', async () => {
    const waiting = new FakeRequest();
    waiting.socket = null;
    const silent = new FakeRequest();
    const requests = new Set<WatchedRequest>([waiting]);
    watch = new SilenceWatch(SILENCE_MS, requests);
    watch.start();
    await sleep(2 * SILENCE_MS);
    expect(waiting.error).to.equal(undefined);
    watch.stop();
    requests.add(silent);
    await sleep(2 * SILENCE_MS);
    expect(silent.error).to.equal(undefined);
  });
});
