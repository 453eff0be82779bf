/**
 * What both ends of a resumable WebSocket connection are: one byte stream of NDJSON lines (or,
 * to the connection that owns it, a message port) over whichever socket carries the connection
 * now.
 *
 * @packageDocumentation
 */
import { Duplex } from 'node:stream';
import { MESSAGE_PORT, type MessagePort } from '../../../framing/message-port';
import { pushFrame } from '../remote-connection';

/**
 * A socket a resumable connection runs over, as both ends see it (a WebSocket's stream of NDJSON
 * lines): its frames go through its message port, and it tells how it closed.
 *
 * @internal
 */
export interface FrameSocket extends Duplex {
  /** The socket's message port: frames in, messages out (see {@link MessagePort}). */
  readonly [MESSAGE_PORT]: MessagePort;
  /** The bytes the socket holds unsent. */
  readonly bufferedAmount: number;
  /** The close code and reason the socket closed with, once it has closed. */
  readonly peerClose: { readonly code: number; readonly reason: string } | undefined;
  /** Makes the end of the writable side close the socket as going away (WebSocket 1001). */
  markGoingAway(): void;
  /** Closes the socket as going away: it ends once the peer has answered. */
  closeGoingAway(): void;
}

/**
 * Sends `texts` on `socket`, one frame each, in order after everything sent before, handing the
 * array over (see {@link MessagePort.sendMessages}); returns false when the socket is full (then
 * `onDrain` is called once it has taken them).
 *
 * @remarks Straight through the socket's message port: these streams never write lines to their
 * sockets, so nothing written as lines can be waiting in one.
 * @internal
 */
export function sendFrames(socket: FrameSocket, texts: string[], onDrain: () => void = ignore): boolean {
  return socket[MESSAGE_PORT].sendMessages(texts, onDrain);
}

/** Whether a line holds more than whitespace (the connection's own always do). */
function isNotBlank(line: string): boolean {
  return line !== '' && (line.charCodeAt(0) > 0x20 || line.trim() !== '');
}

/**
 * A byte stream of NDJSON lines over the socket a subclass attaches ({@link SocketHoppingStream.socket},
 * which may change or be missing for a while): lines written go out as frames through
 * {@link SocketHoppingStream.sendLines}, frames received come in through
 * {@link SocketHoppingStream.deliver}. A connection that owns the stream takes both sides as
 * messages instead, through its {@link MessagePort}.
 *
 * @remarks A write whose frames the socket cannot take now (full, or none attached) is held until
 * {@link SocketHoppingStream.releaseWrite}. While frames go to a message port, pausing or
 * resuming the stream pauses or resumes the socket.
 * @internal
 */
export abstract class SocketHoppingStream extends Duplex {
  /** The socket the connection runs over now; `undefined` between two. */
  protected socket: FrameSocket | undefined;
  #partial = '';
  #heldWrite: (() => void) | undefined;
  /** Where frames go instead of being pushed as lines (a connection that owns this stream). */
  #onFrameOut: ((frame: Buffer, start: number) => void) | undefined;
  /** The message-level side door for the connection that owns this stream. */
  readonly [MESSAGE_PORT]: MessagePort;
  /**
   * Whether the stream is destroyed or its readable side has ended (frames received are then
   * dropped). Its own flag, read on every frame: the `destroyed` and `readableEnded` getters are
   * shared by every stream class of the process, where their property loads are megamorphic.
   * Subclasses set it first thing in `_destroy` (which `destroy()` calls at once).
   */
  protected isOver = false;

  constructor() {
    super({ decodeStrings: false, allowHalfOpen: true });
    this.once('end', () => (this.isOver = true));
    const stream = this;
    this[MESSAGE_PORT] = {
      receiveFrames: (onFrame) => {
        if (onFrame && (this.readableLength > 0 || this.listenerCount('data') > 0)) return false;
        this.#onFrameOut = onFrame;
        return true;
      },
      canSendMessages: () => this.writableLength === 0 && this.#partial === '' && !this.writableEnded,
      sendMessages: (texts, onDrain) => this.sendMessages(texts, onDrain),
      get bufferedAmount() {
        return stream.socket?.bufferedAmount ?? 0;
      },
    };
  }

  /**
   * Sends messages (lines without their newline, none blank), taking over the array (it may
   * change it); returns false when the socket is full (`onDrain` follows).
   */
  protected abstract sendLines(lines: string[], onDrain: () => void): boolean;

  /** Sends the messages a connection hands over through the message port; {@link SocketHoppingStream.sendLines} unless overridden. */
  protected sendMessages(texts: string[], onDrain: () => void): boolean {
    return this.sendLines(texts, onDrain);
  }

  /** Hands a frame received (its message from `start` on) to the connection that owns this stream, or pushes it as a line. */
  protected deliver(frame: Buffer, start: number): void {
    if (this.#onFrameOut) this.#onFrameOut(frame, start);
    else if (!pushFrame(this, start === 0 ? frame : frame.subarray(start))) this.socket?.pause();
  }

  /** Lets the write held while the socket was full or missing complete. */
  protected releaseWrite(): void {
    const callback = this.#heldWrite;
    this.#heldWrite = undefined;
    callback?.();
  }

  override _read(): void {
    if (this.socket?.isPaused()) this.socket.resume();
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const lines = (this.#partial + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'))).split('\n');
    this.#partial = lines.pop()!;
    this.#heldWrite = callback;
    if (this.sendLines(lines.filter(isNotBlank), () => this.releaseWrite())) this.releaseWrite();
  }

  /** While frames go to a message port, pausing the stream pauses the socket. */
  override pause(): this {
    if (this.#onFrameOut) this.socket?.pause();
    return super.pause();
  }

  /** While frames go to a message port, resuming the stream resumes the socket. */
  override resume(): this {
    if (this.#onFrameOut && this.socket?.isPaused()) this.socket.resume();
    return super.resume();
  }
}

function ignore(): void {}
