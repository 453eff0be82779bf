/**
 * Batches outgoing lines into one `write()` per burst (to a socket, one per 4 KiB; to another
 * stream, one per high-water mark) and reports backpressure.
 *
 * @packageDocumentation
 */
import { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { MetaStamp } from './meta-stamp';
import { messagePortOf, type MessagePort } from './message-port';

/** Callbacks of a {@link LineWriter}. @internal */
export interface WriterEvents {
  /** The output is full (`true`) or drained again (`false`). */
  backpressure(isFull: boolean): void;
  /**
   * A flush queued by {@link LineWriter.write} starts: a microtask that runs after the job that
   * wrote the first of its lines has returned. Not called for the flush of {@link LineWriter.end}.
   */
  flushing?(): void;
}

/** Settled once: `.then(flush)` queues a flush as a microtask. */
const RESOLVED = Promise.resolve();

/**
 * A message this long or longer is written as a chunk of its own, its newline opening the next
 * chunk: appending the newline to it would make V8 copy the whole text into a new string of the
 * same size. Shorter ones are joined, newline included.
 */
const OWN_CHUNK_CHARS = 64 * 1024;

/**
 * To a socket (a pipe, a child's stdio, TCP), the queue is written as soon as it holds this many
 * characters, without waiting for the flush: the process at the other end starts on the first
 * messages of a burst while this one is still producing the rest; batching a whole burst would
 * make the two processes take turns, each waiting for the other's burst.
 */
const EARLY_WRITE_CHARS = 4 * 1024;

/**
 * Queues lines and writes them together in a microtask queued by the first line: the lines
 * written by synchronous code go out in one `write()` right after it returns, before the event
 * loop moves on, together with those written by the promise callbacks already queued then; later
 * ones in one more. (A microtask: `setImmediate` would add an event-loop turn to every round trip,
 * and `process.nextTick` costs more per flush.) Honours backpressure: reports when the output is
 * full and when it has drained, and reports it early, as soon as the queue alone reaches the
 * output's `writableHighWaterMark`. A long message is a chunk of its own (see
 * {@link OWN_CHUNK_CHARS}); the chunks of one flush are written corked. What is queued is also
 * written before the flush once it reaches {@link EARLY_WRITE_CHARS} to a socket, and, to any other
 * stream, once its short lines reach the output's `writableHighWaterMark` (where backpressure would
 * be reported anyway): a long burst (a loop sending 50,000 notifications in process) is then not
 * held whole until the flush (held whole, every line of it outlives the young generation and the
 * collector copies it, which costs more than the writes save). An in-process reader may then run
 * during the send.
 * To an output that offers a {@link MessagePort} (a WebSocket) the messages of a flush are handed
 * over as they are, one frame each, without newlines and without `write()`.
 *
 * @internal
 */
export class LineWriter {
  readonly #out: Writable;
  readonly #events: WriterEvents;
  /** The lines queued since the last long message (or the flush), each with its newline. */
  #queue = '';
  /** Chunks before `#queue` in this flush, when long messages were queued. */
  #chunks: string[] | undefined;
  /** Characters in `#chunks` and `#queue`, or in `#messages`. */
  #queuedChars = 0;
  /** The output's message port, while messages are sent through it rather than written. */
  #port: MessagePort | undefined;
  /** The messages queued for the port. */
  #messages: string[] = [];
  /** The port's stamp, when it puts a `_meta` entry on every message (see {@link MessagePort.metaStamp}). */
  readonly #portStamp: MetaStamp | undefined;
  /**
   * The `_meta` entries of the messages written here, when the output wants one on every message
   * (a resumable stream), else `undefined`: the port's, each taken for the message written next.
   * A message written without taking its entry first is stamped with the port's. None is handed
   * out once the writer has ended.
   */
  readonly metaStamp: MetaStamp | undefined;
  /** An entry was taken (by {@link LineWriter.metaStamp}) for the message written next. */
  #hasEntry = false;
  /** A flush is queued (a microtask). */
  #isScheduled = false;
  #isFull = false;
  /** Backpressure was reported because the queue itself reached the output's high-water mark. */
  #isQueueFull = false;
  #isEnded = false;
  /** Characters queued at which the queue is written at once, before the flush (to a socket). */
  readonly #earlyWriteChars: number;
  /**
   * Characters of short lines at which the queue is written at once, before the flush (to another
   * stream: its high-water mark). A long message is one string: holding it until the flush costs nothing.
   */
  readonly #earlyLinesChars: number;

  constructor(out: Writable, events: WriterEvents) {
    this.#out = out;
    this.#events = events;
    const port = messagePortOf(out);
    if (port?.canSendMessages()) this.#port = port;
    const portStamp = (this.#portStamp = this.#port?.metaStamp);
    this.metaStamp = portStamp && {
      takeEntry: () => {
        if (this.#isEnded) return undefined;
        this.#hasEntry = true;
        return portStamp.takeEntry();
      },
      stamp: (text) => portStamp.stamp(text),
    };
    const isSocket = out instanceof Socket;
    this.#earlyWriteChars = isSocket ? EARLY_WRITE_CHARS : Number.POSITIVE_INFINITY;
    this.#earlyLinesChars = isSocket ? Number.POSITIVE_INFINITY : out.writableHighWaterMark;
  }

  /** Whether the output cannot take more now: backpressure was reported and has not drained yet. */
  get needsDrain(): boolean {
    return this.#isFull || this.#isQueueFull;
  }

  /** Characters queued for this tick's write plus the bytes the output holds (its stream's buffer, or a message port's unsent bytes). */
  get queuedBytes(): number {
    return this.#queuedChars + (this.#port ? this.#port.bufferedAmount : this.#out.writableLength);
  }

  /** Queues one message's JSON text (without a newline: the writer ends the line). Ignored once ended. */
  write(text: string): void {
    if (this.#isEnded) return;
    if (this.#port) {
      const stamp = this.#portStamp;
      if (stamp) {
        if (this.#hasEntry) this.#hasEntry = false;
        else text = stamp.stamp(text);
      }
      this.#messages.push(text);
      this.#queuedChars += text.length;
    } else {
      this.#queueLine(text);
      this.#queuedChars += text.length + 1;
    }
    // Scheduled even when written early below: the flush also tells the connection that the
    // sending job has returned (WriterEvents.flushing).
    if (!this.#isScheduled) {
      this.#isScheduled = true;
      void RESOLVED.then(this.#scheduledFlush);
    }
    if (this.#queuedChars >= this.#earlyWriteChars || this.#queue.length >= this.#earlyLinesChars) return this.#writeQueued();
    // A queue as large as the output's buffer cannot drain this tick: say so now, so that
    // dispatch stops before more of what was read is handled.
    if (!this.#isFull && !this.#isQueueFull && this.#queuedChars >= this.#out.writableHighWaterMark) {
      this.#isQueueFull = true;
      this.#events.backpressure(true);
    }
  }

  /** Queues `text` and its newline for `write()`: joined to the queue, or as a chunk of its own when long. */
  #queueLine(text: string): void {
    if (text.length < OWN_CHUNK_CHARS) {
      this.#queue += `${text}\n`;
      return;
    }
    const chunks = (this.#chunks ??= []);
    if (this.#queue !== '') chunks.push(this.#queue);
    chunks.push(text);
    this.#queue = '\n';
  }

  readonly #scheduledFlush = (): void => {
    this.#events.flushing?.();
    this.flush();
  };

  /** Writes what is queued now. */
  readonly flush = (): void => {
    this.#isScheduled = false;
    this.#writeQueued();
  };

  /** Writes what is queued, leaving a scheduled flush scheduled. */
  #writeQueued(): void {
    const wasQueueFull = this.#isQueueFull;
    this.#isQueueFull = false;
    const queue = this.#queue;
    const chunks = this.#chunks;
    const messages = this.#messages;
    const isEmpty = this.#queuedChars === 0;
    this.#queue = '';
    this.#chunks = undefined;
    if (messages.length > 0) this.#messages = [];
    this.#queuedChars = 0;
    if (isEmpty) return;
    const port = this.#port;
    // A port drops what it is given once its transport closed: the output's getters stay off this
    // path (shared by every stream class of the process, their property loads go megamorphic).
    if (!port && (this.#out.destroyed || this.#out.writableEnded)) return;
    if (port ? port.sendMessages(messages, this.#onDrain) : this.#write(queue, chunks)) {
      // Still full when an earlier write has not drained: its 'drain' reports the end.
      if (wasQueueFull && !this.#isFull) this.#events.backpressure(false);
    } else if (!this.#isFull) {
      this.#isFull = true;
      // The port calls #onDrain itself.
      if (!port) this.#out.once('drain', this.#onDrain);
      if (!wasQueueFull) this.#events.backpressure(true);
    }
  }

  /** Writes the chunks, then the queue; returns what the last `write()` returned. */
  #write(queue: string, chunks: string[] | undefined): boolean {
    const out = this.#out;
    if (chunks === undefined) return out.write(queue);
    // Corked, a socket takes them in one writev.
    out.cork();
    let isBelowMark = true;
    for (const chunk of chunks) isBelowMark = out.write(chunk);
    if (queue !== '') isBelowMark = out.write(queue);
    out.uncork();
    return isBelowMark;
  }

  readonly #onDrain = (): void => {
    this.#isFull = false;
    if (!this.#isEnded) this.#events.backpressure(false);
  };

  /**
   * Flushes, stops accepting lines and, when `endOutput`, ends the output. Resolves once the output
   * has finished (or failed, or was already gone).
   */
  end(endOutput: boolean): Promise<void> {
    this.flush();
    this.#isEnded = true;
    this.#out.removeListener('drain', this.#onDrain);
    const out = this.#out;
    if (!endOutput || out.destroyed || out.writableFinished) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        out.removeListener('error', done);
        out.removeListener('close', done);
        resolve();
      };
      out.once('error', done);
      out.once('close', done);
      if (out.writableEnded) out.once('finish', done);
      else out.end(done);
    });
  }
}
