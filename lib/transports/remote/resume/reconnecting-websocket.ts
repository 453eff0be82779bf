/**
 * The client side of a resumable WebSocket connection: one byte stream of NDJSON lines that
 * outlives the sockets it runs over. When a socket drops, it opens another, asks the server to
 * resume after the last message it received, sends again what the server had not received, and
 * drops any message it sees twice.
 *
 * @packageDocumentation
 */
import { MESSAGE_PORT } from '../../../framing/message-port';
import { ResumeFailedError, ServerGoingAwayError, WebSocketCloseCode } from '../errors';
import { destroyAfterRead } from '../going-away';
import { backoffDelay, resumableOf, type ReconnectSettings } from './resume-options';
import { AckSchedule, cursorAckText, readReceivedAck } from './stream-ack';
import {
  STREAM_ACK_METHOD,
  STREAM_RESUMED_METHOD,
  STREAM_RESUME_FAILED_METHOD,
  STREAM_RESUME_METHOD,
  controlMessage,
  controlOf,
  isControlCandidate,
} from './control-messages';
import { takeCursor, TakenCursor } from './frame-cursor';
import { cursorNumberOf } from './stream-cursor';
import { sendFrames, SocketHoppingStream, type FrameSocket } from './socket-hopping-stream';
import { Ring } from './ring';

/**
 * A client connection over resumable WebSockets, as a byte stream of NDJSON lines.
 *
 * @remarks Messages written are numbered (implicitly: the server counts what it receives) and
 * kept until the server acknowledges them (`stream/ack`, or `stream/resumed` on a resume); on a
 * resume the unacknowledged ones the server did not receive are sent again, in order. Messages
 * received carry a cursor, taken out of them before they go on (see {@link takeCursor}) and
 * acknowledged now and then (`stream/ack {cursor}`, see {@link AckSchedule}); one at or before the last
 * cursor received is a replay already seen and is dropped. A normal close by the server ends the
 * stream (no reconnection); so does `end()` here. A drop before the server advertised
 * `transport.resumable` destroys the stream with the socket's error, as without reconnection.
 * @internal
 */
export class ReconnectingWebSocketStream extends SocketHoppingStream {
  readonly #connectionId: string | undefined;
  readonly #settings: ReconnectSettings;
  readonly #open: (signal: AbortSignal) => Promise<FrameSocket>;
  /** Aborts an attempt under way when the stream closes or ends. */
  readonly #aborter = new AbortController();
  /**
   * Sent messages the server has not acknowledged; `#sentBase` messages were sent before the first
   * (acknowledged, or sent before the server advertised resumption, which are not kept).
   */
  readonly #unacked = new Ring('');
  #sentBase = 0;
  /** The cursor of the last message received (`undefined`: none yet). */
  #lastCursor: number | undefined;
  /** What was taken out of the frame received last. */
  readonly #taken = new TakenCursor();
  /** When the cursors received are acknowledged (so that the server's replay buffer lets them go). */
  readonly #cursorAck = new AckSchedule();
  #isResumable = false;
  #isEnding = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    first: FrameSocket,
    connectionId: string | undefined,
    settings: ReconnectSettings,
    open: (signal: AbortSignal) => Promise<FrameSocket>,
  ) {
    super();
    this.#connectionId = connectionId;
    this.#settings = settings;
    this.#open = open;
    this.#attach(first);
  }

  #attach(socket: FrameSocket): void {
    this.socket = socket;
    socket[MESSAGE_PORT].receiveFrames(this.#onFrame);
    let isNormal = false;
    let error: Error | undefined;
    socket.once('end', () => (isNormal = true));
    socket.on('error', (cause: Error) => (error = cause));
    socket.once('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.releaseWrite();
      if (this.#isEnding) return this.#end();
      if (isNormal) return this.#endNormally(socket);
      const dropped = error ?? new Error('the WebSocket closed');
      if (!this.#isResumable || this.#connectionId === undefined) return void this.destroy(dropped);
      void this.#reconnect(dropped);
    });
    socket.resume();
  }

  readonly #onFrame = (frame: Buffer): void => {
    if (this.isOver) return;
    if (isControlCandidate(frame) && this.#onControl(frame)) return;
    if (!this.#isResumable && resumableOf(frame.toString('utf8')) !== undefined) this.#isResumable = true;
    const taken = this.#taken;
    takeCursor(frame, taken);
    const cursor = taken.cursor;
    if (cursor !== undefined) {
      // A replay of a message received before.
      if (this.#lastCursor !== undefined && cursor <= this.#lastCursor) return;
      this.#lastCursor = cursor;
      if (this.#cursorAck.received(frame.length)) this.#acknowledgeCursor(cursor);
    }
    this.deliver(frame, taken.start);
  };

  /** Takes a frame that starts as a control message; true when it was the server's (which carry no cursor). */
  #onControl(frame: Buffer): boolean {
    const received = readReceivedAck(frame);
    if (received !== -1) {
      this.#acknowledge(received);
      return true;
    }
    const text = frame.toString('utf8');
    const control = controlOf(text);
    if (control === undefined || cursorNumberOf(text) !== undefined) return false;
    if (control.method === STREAM_ACK_METHOD) this.#acknowledge(control.params.received);
    return true;
  }

  /** Tells the server the last cursor received, so that its replay buffer lets go of what came before. */
  #acknowledgeCursor(cursor: number): void {
    if (this.#isResumable && this.socket) sendFrames(this.socket, [cursorAckText(cursor)]);
  }

  #acknowledge(received: unknown): void {
    if (typeof received !== 'number' || !Number.isSafeInteger(received) || received <= this.#sentBase) return;
    const count = Math.min(received - this.#sentBase, this.#unacked.length);
    this.#unacked.dropFront(count);
    this.#sentBase += count;
  }

  async #reconnect(dropped: Error): Promise<void> {
    let error = dropped;
    for (let attempt = 1; attempt <= this.#settings.attempts; attempt++) {
      const delayMs = backoffDelay(this.#settings, attempt);
      this.#settings.onReconnecting({ attempt, delayMs, error });
      await new Promise<void>((resolve) => (this.#timer = setTimeout(resolve, delayMs)));
      if (this.destroyed || this.#isEnding) return;
      try {
        const resent = await this.#resumeOn(await this.#open(this.#aborter.signal));
        this.#settings.onResumed({ attempts: attempt, resent });
        return;
      } catch (caught) {
        if (caught instanceof ResumeFailedError) return void this.destroy(caught);
        error = caught as Error;
      }
    }
    this.destroy(new ResumeFailedError('attempts', error.message, { cause: error }));
  }

  /** Asks `socket` to resume; resolves with how many messages were sent again once resumed. */
  #resumeOn(socket: FrameSocket): Promise<number> {
    if (this.destroyed || this.#isEnding) {
      socket.destroy();
      return Promise.resolve(0);
    }
    return new Promise<number>((resolve, reject) => {
      const port = socket[MESSAGE_PORT];
      const onClose = (): void => reject(new Error('the WebSocket closed before the server answered the resume'));
      socket.on('error', ignore);
      socket.once('close', onClose);
      port.receiveFrames((frame) => {
        const control = controlOf(frame.toString('utf8'));
        socket.removeListener('close', onClose);
        if (control?.method === STREAM_RESUMED_METHOD) {
          const { received } = control.params;
          if (typeof received !== 'number' || received < this.#sentBase) {
            socket.destroy();
            return reject(new ResumeFailedError('refused', 'the server lost messages sent before it advertised resumption'));
          }
          this.#acknowledge(received);
          const resent = this.#unacked.length;
          this.#attach(socket);
          if (resent > 0) sendFrames(socket, this.#unacked.toArray());
          return resolve(resent);
        }
        socket.destroy();
        const reason = control?.method === STREAM_RESUME_FAILED_METHOD ? String(control.params.reason) : 'an unexpected first frame';
        reject(new ResumeFailedError('refused', reason));
      });
      socket.resume();
      const cursor = this.#lastCursor === undefined ? null : String(this.#lastCursor);
      sendFrames(socket, [controlMessage(STREAM_RESUME_METHOD, { connectionId: this.#connectionId, cursor })]);
    });
  }

  /** The server closed normally: no resume; 1001 (a draining or stopping server) is reported as such. */
  #endNormally(socket: FrameSocket): void {
    const close = socket.peerClose;
    if (close?.code !== WebSocketCloseCode.GoingAway) return this.#end();
    destroyAfterRead(this, new ServerGoingAwayError(close.code, close.reason || 'going away'));
  }

  #end(): void {
    clearTimeout(this.#timer);
    if (this.readableEnded || this.destroyed) return;
    this.once('end', () => this.destroy());
    this.push(null);
  }

  /** Keeps (once resumable) and sends messages; returns false when the socket is full (`onDrain` follows). */
  protected override sendLines(lines: string[], onDrain: () => void): boolean {
    // Kept for a resend only once the server is known to resume (before, a drop ends the connection).
    if (this.#isResumable) for (let i = 0; i < lines.length; i++) this.#unacked.push(lines[i]!);
    else this.#sentBase += lines.length;
    const socket = this.socket;
    return !socket || lines.length === 0 || sendFrames(socket, lines, onDrain);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#isEnding = true;
    this.#aborter.abort();
    const socket = this.socket;
    if (socket) socket.end();
    else this.#end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.isOver = true;
    clearTimeout(this.#timer);
    this.#aborter.abort();
    this.releaseWrite();
    const socket = this.socket;
    this.socket = undefined;
    if (socket && !socket.destroyed) {
      if (error) socket.destroy();
      else socket.end();
    }
    callback(error);
  }
}

function ignore(): void {}
