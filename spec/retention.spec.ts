/**
 * What a connection keeps in memory: bounds on the heap retained after a full
 * collection, never on time. Each scenario runs inside a helper function, so that nothing it
 * allocates stays reachable from the test's own scope.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { Connection, RequestTimeoutError } from '../lib';
import { collectGarbage } from './helpers/events';

const MiB = 1024 * 1024;

/** The heap in use after two full collections (finalizers run in between). */
async function retainedHeap(): Promise<number> {
  await collectGarbage();
  await collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** Resolves once `output` has carried a line that contains `text`. */
function lineContaining(output: PassThrough, text: string): Promise<void> {
  return new Promise((resolve) => {
    let tail = '';
    const onData = (chunk: Buffer): void => {
      tail = (tail + chunk.toString()).slice(-4096);
      if (!tail.includes(text)) return;
      output.removeListener('data', onData);
      resolve();
    };
    output.on('data', onData);
  });
}

/**
 * Opens a connection whose `wait` handler only listens to its responder's signal for a cancel (the
 * responder is then reachable from its own signal), sends it `count` requests, closes it, and lets
 * go of everything.
 */
async function closeWithHandlersHoldingTheirSignals(count: number): Promise<void> {
  const input = new PassThrough();
  const output = new PassThrough();
  const connection = new Connection(input, output);
  connection.onRequest('wait', (_params, responder) => {
    responder.signal.addEventListener('abort', () => {
      if (responder.isCancelled) responder.respondCancelled();
    });
  });
  connection.onRequest('ping', () => 'pong');
  const lines: string[] = [];
  for (let id = 1; id <= count; id++) lines.push(`{"jsonrpc":"2.0","id":${id},"method":"wait"}\n`);
  lines.push('{"jsonrpc":"2.0","id":"last","method":"ping"}\n');
  const answered = lineContaining(output, '"id":"last"');
  input.write(lines.join(''));
  // Requests are dispatched in order: once the last one is answered, every `wait` handler has run.
  await answered;
  expect(connection.inflightCount).to.equal(count);
  await connection.close();
  input.destroy();
  output.destroy();
}

/** Sends `count` requests with `paramBytes` of params and a short timeout to a peer that never answers. */
async function timeOutRequests(connection: Connection, count: number, paramBytes: number): Promise<void> {
  const padding = 'x'.repeat(paramBytes);
  const outcomes: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const sent = connection.sendRequest('never', { i, padding: `${padding}${i}` }, { timeout: 5, timeoutGrace: 5 });
    outcomes.push(sent.then(undefined, (error: unknown) => error));
  }
  const errors = await Promise.all(outcomes);
  expect(errors.every((error) => error instanceof RequestTimeoutError)).to.equal(true);
}

/**
 * Opens a connection, sends a request in the same job that closes the connection, and returns a
 * weak reference to that request (nobody awaits it: it fails with the close).
 */
function sendAndCloseInOneJob(): WeakRef<object> {
  const input = new PassThrough();
  const output = new PassThrough();
  output.resume();
  const connection = new Connection(input, output);
  const sent = connection.sendRequest('work', { big: 'x'.repeat(1024) });
  void connection.close().then(() => input.destroy());
  return new WeakRef(sent);
}

describe('memory retained by a connection', function () {
  this.timeout(60_000);

  it('keeps nothing of a closed connection whose 20,000 handlers held their responders from their own signals', async () => {
    const before = await retainedHeap();
    await closeWithHandlersHoldingTheirSignals(20_000);
    const growth = (await retainedHeap()) - before;
    expect(growth, `${(growth / MiB).toFixed(1)} MiB retained`).to.be.below(2 * MiB);
  });

  it('keeps neither the params nor the entries of 5,000 requests of 10 KB given up after their timeout', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    output.resume(); // the peer reads everything and never answers
    const connection = new Connection(input, output);
    try {
      const before = await retainedHeap();
      await timeOutRequests(connection, 5_000, 10_000);
      expect(connection.pendingCount).to.equal(0);
      const growth = (await retainedHeap()) - before;
      expect(growth, `${(growth / MiB).toFixed(1)} MiB retained`).to.be.below(4 * MiB);
    } finally {
      await connection.close();
      input.destroy();
    }
  });

  it('keeps no request sent in the job that closed its connection (it leaves the drop-cancel queue)', async () => {
    const sent = sendAndCloseInOneJob();
    await collectGarbage();
    await collectGarbage();
    expect(sent.deref(), 'the request is still reachable').to.equal(undefined);
  });
});
