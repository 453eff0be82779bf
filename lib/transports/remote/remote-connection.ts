/**
 * What every remote transport shares, WebSocket and Streamable HTTP, client and server: the
 * options of a connection over a network and their checks, the `Connection` run over a remote
 * byte stream, a message-framed frame pushed as one NDJSON line, the header that names a
 * connection, and who a remote client is.
 *
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { Connection, type ConnectionOptions } from '../../connection/connection';
import { frameToLine } from '../../framing/ndjson';
import { DEFAULT_MAX_PAYLOAD, checkPositiveInteger } from './limits';

/**
 * The header naming a remote connection: set by the server on the `initialize` answer of a
 * Streamable HTTP connection and on the `101` of a WebSocket upgrade; sent by a client that
 * resumes (a WebSocket upgrade) or goes on with (every later HTTP request) that connection.
 */
export const HEADER_CONNECTION_ID = 'Acp-Connection-Id';

/** The heartbeat of a WebSocket connection. */
export interface HeartbeatOptions {
  /** Time between pings in ms. Default 30,000. */
  intervalMs?: number;
  /** How long after a ping the peer may stay silent before it is presumed gone, in ms. Default 10,000. */
  timeoutMs?: number;
}

/** Default time between pings. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;
/** Default silence after a ping that ends the connection. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;

/** Options of a connection over a network transport (WebSocket or Streamable HTTP). */
export interface RemoteConnectionOptions extends Omit<ConnectionOptions, 'maxLineBytes' | 'endOutputOnClose'> {
  /**
   * The largest accepted message in bytes. Default 64 MiB (the line limit over stdio). Over
   * WebSocket a larger frame closes the socket with code 1009.
   */
  maxPayload?: number;
  /**
   * WebSocket only: ping every `intervalMs` (default 30 s) and close when the peer stays silent
   * `timeoutMs` (default 10 s) after a ping; `false` turns the heartbeat off.
   */
  heartbeat?: HeartbeatOptions | false;
}

/** A network transport a remote server offers. */
export type RemoteTransport = 'websocket' | 'http';

/** Who a new remote client is. */
export interface RemoteClientInfo {
  /** The transport the client uses. */
  readonly transport: RemoteTransport;
  /** The request that opened it: the WebSocket upgrade, or the Streamable HTTP `initialize` POST. */
  readonly request: IncomingMessage;
  /**
   * A fresh UUID, sent as `Acp-Connection-Id` (in the 101 response too); or, for a Streamable HTTP
   * client that names its connection in the URL path (`PATH/<id>`), that id.
   */
  readonly connectionId: string;
}

/** Validates the heartbeat option. @throws TypeError or RangeError naming the option */
export function checkHeartbeat(heartbeat: HeartbeatOptions | false | undefined): void {
  if (heartbeat === undefined || heartbeat === false) return;
  if (typeof heartbeat !== 'object' || heartbeat === null) throw new TypeError('heartbeat must be an object or false');
  checkPositiveInteger('heartbeat.intervalMs', heartbeat.intervalMs);
  checkPositiveInteger('heartbeat.timeoutMs', heartbeat.timeoutMs);
}

/** Validates the options shared by remote clients and servers. @throws TypeError or RangeError naming the option */
export function checkRemoteOptions(options: RemoteConnectionOptions): void {
  checkPositiveInteger('maxPayload', options.maxPayload);
  checkHeartbeat(options.heartbeat);
}

/**
 * Runs a {@link Connection} over a byte stream of a network transport; the stream is destroyed
 * once the connection has closed and flushed (a resumable server stream whose client is away
 * ends itself instead).
 *
 * @internal
 */
export function remoteConnection(stream: Duplex, options: RemoteConnectionOptions): Connection {
  const { maxPayload, heartbeat: _heartbeat, ...connectionOptions } = options;
  const connection = new Connection(stream, stream, { ...connectionOptions, maxLineBytes: maxPayload ?? DEFAULT_MAX_PAYLOAD });
  connection.once('close', () => {
    // A resumable server stream whose client is away ends itself: after that client has resumed
    // to collect what it missed, or at the end of its grace period.
    void connection.close().then(() => {
      if (!(stream as { isAwaitingResume?: boolean }).isAwaitingResume) stream.destroy();
    });
  });
  return connection;
}

const NEWLINE = 0x0a;
const NEWLINE_BUFFER = Buffer.from('\n');
/**
 * Frames from this size up are not copied to append their newline: {@link pushFrame} pushes the
 * frame and the newline as two chunks (the line decoder decodes each chunk as it comes, so two
 * chunks cost it nothing more than one). Below it, one chunk is cheaper than two `'data'` events.
 */
const COPY_LIMIT = 64 * 1024;

/**
 * Pushes one message-framed frame (a WebSocket text frame, an HTTP body, an SSE event) into
 * `stream` as one NDJSON line, as {@link frameToLine} makes it; a large frame without a newline
 * goes as it is, then a newline, rather than copied. Returns `false` when `stream` is full.
 *
 * @internal
 */
export function pushFrame(stream: Readable, frame: Buffer): boolean {
  if (frame.length >= COPY_LIMIT && frame.indexOf(NEWLINE) === -1) {
    stream.push(frame);
    return stream.push(NEWLINE_BUFFER);
  }
  const line = frameToLine(frame);
  return line === undefined || stream.push(line);
}
