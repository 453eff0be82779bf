/**
 * A WebSocket presented as a byte stream of NDJSON lines, so that a `Connection` (or a child
 * process's stdio) runs over it unchanged: each text frame in becomes one line, each line out
 * becomes one text frame.
 *
 * @packageDocumentation
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import { Heartbeat } from './heartbeat';
import { HeartbeatTimeoutError, WebSocketCloseCode, WebSocketCloseError } from '../errors';
import { MESSAGE_PORT, type MessagePort } from '../../../framing/message-port';
import { pushFrame, type HeartbeatOptions } from '../remote-connection';

/** Options of {@link WebSocketStream}. @internal */
export interface WebSocketStreamOptions {
  /** The heartbeat; `false` turns it off. */
  heartbeat?: HeartbeatOptions | false;
  /** Stop taking lines while the socket holds more than this many unsent bytes. Default 1 MiB. */
  highWaterMark?: number;
}

/** `ws` error codes and the close code `ws` sent for each. */
const WS_ERROR_CLOSE_CODES: Record<string, number> = {
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: WebSocketCloseCode.MessageTooBig,
  WS_ERR_INVALID_UTF8: WebSocketCloseCode.InvalidPayload,
};

/** Close codes that end a connection normally: the readable side just ends. */
const NORMAL_CLOSE_CODES = new Set<number>([WebSocketCloseCode.Normal, WebSocketCloseCode.GoingAway, 1005]);

/**
 * A Duplex over an open `ws` WebSocket: the readable side yields each text frame as one line, the
 * writable side sends each line as one text frame.
 *
 * @remarks
 * Backpressure both ways: while the socket holds more than `highWaterMark` unsent bytes, a write
 * completes only once the socket has taken its last frame (so `write()` returns false and a
 * `Connection` holds its dispatch); while the readable side is full, the socket is paused.
 * A binary frame closes the socket with 1003; a message over `maxPayload` (1009) or invalid
 * UTF-8 (1007) is closed by `ws` itself; each destroys this stream with a
 * {@link WebSocketCloseError}. A peer close with 1000, 1001 or no code ends the readable side;
 * any other close (1006 when the TCP connection dropped) destroys it with a `WebSocketCloseError`.
 * A heartbeat timeout terminates the socket and destroys this stream with a
 * {@link HeartbeatTimeoutError}. Ending the writable side sends a 1000 close frame after every
 * frame written before. A `Connection` that owns the stream takes its frames and sends its
 * messages through the stream's {@link MessagePort}, bypassing the lines (same frames, same
 * backpressure).
 *
 * @internal
 */
export class WebSocketStream extends Duplex {
  readonly #ws: WebSocket;
  #peerClose: { readonly code: number; readonly reason: string } | undefined;
  #isGoingAway = false;
  readonly #heartbeat: Heartbeat | undefined;
  readonly #highWaterMark: number;
  /** Text written after the last newline: the start of a line still to come. */
  #partial = '';
  /** Where frames go instead of being pushed as lines (see {@link MessagePort.receiveFrames}). */
  #onFrame: ((frame: Buffer, start: number) => void) | undefined;
  /** Sends over the high-water mark so far: only the latest one's completion reports the drain. */
  #fullSends = 0;
  /** The message-level side door for the connection that owns this stream. */
  readonly [MESSAGE_PORT]: MessagePort;

  constructor(ws: WebSocket, socket: Socket, options: WebSocketStreamOptions = {}) {
    super({ decodeStrings: false, allowHalfOpen: true });
    this.#ws = ws;
    this.#highWaterMark = options.highWaterMark ?? 1024 * 1024;
    this[MESSAGE_PORT] = {
      receiveFrames: (onFrame) => {
        if (onFrame && (this.readableLength > 0 || this.listenerCount('data') > 0)) return false;
        this.#onFrame = onFrame;
        return true;
      },
      canSendMessages: () => this.writableLength === 0 && this.#partial === '' && !this.writableEnded,
      sendMessages: (texts, onDrain) => this.#sendMessages(texts, onDrain),
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
    };
    ws.on('message', this.#onMessage);
    ws.on('close', this.#onClose);
    ws.on('error', this.#onError);
    this.#heartbeat =
      options.heartbeat === false
        ? undefined
        : new Heartbeat(ws, socket, options.heartbeat ?? {}, (timeoutMs) => {
            ws.terminate();
            this.destroy(new HeartbeatTimeoutError(timeoutMs));
          });
  }

  /** The underlying WebSocket's unsent bytes. */
  get bufferedAmount(): number {
    return this.#ws.bufferedAmount;
  }

  readonly #onMessage = (data: WebSocket.RawData, isBinary: boolean): void => {
    if (this.destroyed) return;
    if (isBinary) {
      this.#ws.close(WebSocketCloseCode.UnsupportedData, 'only text frames are accepted');
      this.destroy(new WebSocketCloseError(WebSocketCloseCode.UnsupportedData, 'only text frames are accepted', true));
      return;
    }
    const frame = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (this.#onFrame) this.#onFrame(frame, 0);
    else if (!pushFrame(this, frame)) this.#ws.pause();
  };

  #sendMessages(texts: readonly string[], onDrain: () => void): boolean {
    const ws = this.#ws;
    const last = texts.length - 1;
    if (ws.readyState !== ws.OPEN || last < 0) return true;
    for (let i = 0; i < last; i++) ws.send(texts[i]!);
    const text = texts[last]!;
    if (ws.bufferedAmount + text.length <= this.#highWaterMark) {
      ws.send(text);
      return true;
    }
    // Full: the drain comes once the socket has taken this frame, unless a later send is full too.
    const send = ++this.#fullSends;
    ws.send(text, () => {
      if (send === this.#fullSends) onDrain();
    });
    return false;
  }

  /** While frames go to a message port, pausing the stream pauses the socket. */
  override pause(): this {
    if (this.#onFrame) this.#ws.pause();
    return super.pause();
  }

  /** While frames go to a message port, resuming the stream resumes the socket. */
  override resume(): this {
    if (this.#onFrame && this.#ws.isPaused) this.#ws.resume();
    return super.resume();
  }

  readonly #onError = (error: Error & { code?: string }): void => {
    const closeCode = WS_ERROR_CLOSE_CODES[error.code ?? ''] ?? 1002;
    this.destroy(new WebSocketCloseError(closeCode, error.message, true, { cause: error }));
  };

  readonly #onClose = (code: number, reason: Buffer): void => {
    this.#heartbeat?.stop();
    this.#peerClose = { code, reason: reason.toString('utf8') };
    if (this.destroyed) return;
    if (NORMAL_CLOSE_CODES.has(code)) {
      this.#partial = '';
      // Nothing can be sent any more: once everything received has been read, the stream is done.
      this.once('end', () => this.destroy());
      this.push(null);
      return;
    }
    this.destroy(new WebSocketCloseError(code, reason.toString('utf8'), false));
  };

  /** The close code and reason the socket closed with, once it has closed (1005: the peer sent none). */
  get peerClose(): { readonly code: number; readonly reason: string } | undefined {
    return this.#peerClose;
  }

  /** Makes the end of the writable side close the socket with 1001 (going away) instead of 1000. */
  markGoingAway(): void {
    this.#isGoingAway = true;
  }

  /** Closes the socket with 1001 (going away): the stream ends once the peer has answered, or is cut by the heartbeat. */
  closeGoingAway(): void {
    if (this.#ws.readyState === this.#ws.OPEN) this.#ws.close(WebSocketCloseCode.GoingAway, 'server shutting down');
    else if (this.#ws.readyState !== this.#ws.CLOSING) this.destroy();
  }

  override _read(): void {
    if (this.#ws.isPaused) this.#ws.resume();
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const text = this.#partial + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const lines = text.split('\n');
    this.#partial = lines.pop()!;
    if (this.#ws.readyState !== this.#ws.OPEN) return callback();
    let last = lines.length - 1;
    while (last >= 0 && lines[last] === '') last--;
    for (let i = 0; i <= last; i++) {
      const line = lines[i]!;
      if (line === '') continue;
      if (i === last && this.#ws.bufferedAmount + line.length > this.#highWaterMark) {
        // Full: this write completes once the socket has taken the frame.
        this.#ws.send(line, (error) => callback(error && this.#ws.readyState === this.#ws.OPEN ? error : null));
        return;
      }
      this.#ws.send(line);
    }
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#heartbeat?.stop();
    if (this.#partial !== '' && this.#ws.readyState === this.#ws.OPEN) this.#ws.send(this.#partial);
    this.#partial = '';
    if (this.#ws.readyState === this.#ws.OPEN || this.#ws.readyState === this.#ws.CONNECTING) {
      if (this.#isGoingAway) this.#ws.close(WebSocketCloseCode.GoingAway, 'server shutting down');
      else this.#ws.close(WebSocketCloseCode.Normal);
    }
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#heartbeat?.stop();
    this.#ws.removeListener('message', this.#onMessage);
    // A late 'error' from ws must not crash the process once nobody listens for ours.
    this.#ws.removeListener('error', this.#onError);
    this.#ws.on('error', ignore);
    if (this.#ws.readyState === this.#ws.OPEN) {
      if (error) this.#ws.terminate();
      else this.#ws.close(WebSocketCloseCode.Normal);
    }
    callback(error);
  }
}

function ignore(): void {}
