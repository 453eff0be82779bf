/**
 * The message-level side door of a message-framed transport (a WebSocket): a connection over it
 * takes each frame and sends each message directly, instead of through the stream as NDJSON lines.
 *
 * @packageDocumentation
 * @internal
 */
import type { MetaStamp } from './meta-stamp';

/**
 * What a stream that carries one message per frame offers the connection that owns it.
 *
 * @remarks
 * The stream stays a byte stream of NDJSON lines for everyone else (a child process's stdio piped
 * to it, say); a connection switches each side to messages while it owns it, which spares every
 * message the stream machinery and the newline added on one side and searched for on the other.
 * Neither is taken while bytes are queued on that side of the stream, so that nothing is
 * reordered: the connection then uses the byte stream.
 *
 * @internal
 */
export interface MessagePort {
  /**
   * From now on hands each received frame to `onFrame` instead of pushing it as a line: one
   * message's UTF-8 bytes, from `start` on (the bytes before are none of the message's: a
   * transport may have taken something out of it in place); `undefined` switches back. While
   * frames are handed over, pausing the stream pauses the transport. Returns whether the switch
   * was made.
   */
  receiveFrames(onFrame: ((frame: Buffer, start: number) => void) | undefined): boolean;
  /**
   * Whether messages may be sent with {@link MessagePort.sendMessages} now: nothing written
   * before is still queued in the stream (so a message cannot overtake it).
   */
  canSendMessages(): boolean;
  /**
   * Sends each text as one frame, in order, after everything sent before. The array is handed
   * over: the port may keep or change it, so the caller must not use it again. Returns `false`
   * when the transport holds more than its high-water mark once they are queued: `onDrain` is then
   * called once it has taken them (or closed). Texts given once the transport closed are dropped.
   */
  sendMessages(texts: string[], onDrain: () => void): boolean;
  /** Bytes the transport holds unsent. */
  readonly bufferedAmount: number;
  /**
   * Present on a transport that puts a `_meta` entry on every message it sends (a resumable
   * stream's cursor, numbered in the order messages are handed over).
   */
  metaStamp?: MetaStamp;
}

/** The key under which a stream offers its {@link MessagePort}. @internal */
export const MESSAGE_PORT: unique symbol = Symbol('acp-wire.messagePort');

/** The {@link MessagePort} `stream` offers, if any. @internal */
export function messagePortOf(stream: object): MessagePort | undefined {
  return (stream as { [MESSAGE_PORT]?: MessagePort })[MESSAGE_PORT];
}
