/**
 * Connections over WebSocket (the `ws` package): one JSON-RPC message per text frame.
 *
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import type { Connection } from '../../../connection/connection';
import { HttpStatusError } from '../errors';
import { DEFAULT_MAX_PAYLOAD, checkPositiveInteger } from '../limits';
import { HEADER_CONNECTION_ID, checkRemoteOptions, remoteConnection, type RemoteConnectionOptions } from '../remote-connection';
import { WebSocketStream } from './websocket-stream';
import type * as ReconnectingModule from '../resume/reconnecting-websocket';
import { reconnectSettings, type ReconnectOptions, type ReconnectSettings } from '../resume/resume-options';

/** Options of {@link connectWebSocket}. */
export interface ConnectWebSocketOptions extends RemoteConnectionOptions {
  /** Extra headers of the upgrade request (e.g. a cookie or a proxy's own auth). */
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Give up when the handshake has not completed after this many ms. Default 30,000. */
  handshakeTimeoutMs?: number;
  /** Aborts the connection attempt (not the connection once open: close it instead). */
  signal?: AbortSignal;
  /** `wss://`: certificate authorities to trust instead of the system's (e.g. a self-signed server's). */
  ca?: string | Buffer | (string | Buffer)[];
  /** `wss://`: whether to check the server's certificate. Default `true`. */
  rejectUnauthorized?: boolean;
  /**
   * Reconnects by itself when the socket drops (not after `close()`, nor after the server closed
   * it normally), if the server advertised `transport.resumable` in its `initialize` answer:
   * jittered exponential backoff, bounded attempts, then a `stream/resume` from the last message
   * received; what the server had not received is sent again, nothing twice. Pending requests are
   * answered once. When the resume is refused or every attempt fails, the connection closes with
   * a `ResumeFailedError`. A server that closes it going away (1001: a drain, a shutdown) is not
   * resumed: the connection closes with a `ServerGoingAwayError`. `true`: the defaults. Default off.
   */
  reconnect?: ReconnectOptions | boolean;
}

/**
 * Wraps an open `ws` WebSocket as a byte stream of NDJSON lines (one per text frame).
 *
 * @internal
 */
export function webSocketStream(ws: WebSocket, socket: Socket, options: RemoteConnectionOptions): WebSocketStream {
  return new WebSocketStream(ws, socket, { heartbeat: options.heartbeat });
}

/**
 * Connects to a WebSocket server (`ws://` or `wss://`) and runs a {@link Connection} over it.
 *
 * @remarks
 * Each JSON-RPC message is one text frame. The connection closes when the server closes the
 * socket, the TCP connection drops, or the heartbeat finds the server gone: pending requests then
 * reject with `ConnectionClosedError`, whose `cause` is a `WebSocketCloseError` or
 * `HeartbeatTimeoutError` when the end was not a normal close. `connection.close()` sends a 1000
 * close frame after everything written before.
 * @throws TypeError or RangeError for an invalid URL or option
 * @returns resolves once the socket is open; rejects with an {@link HttpStatusError} when the
 * server refuses the upgrade (401 wrong token, 403 origin refused, 404 wrong path), or with the
 * network error (e.g. ECONNREFUSED)
 * @example
 * ```ts
 * const connection = await connectWebSocket('ws://127.0.0.1:4000/acp', { token: process.env.ACP_TOKEN });
 * console.log(await connection.sendRequest('initialize', { protocolVersion: 2 }));
 * await connection.close();
 * ```
 */
export function connectWebSocket(url: string | URL, options: ConnectWebSocketOptions = {}): Promise<Connection> {
  const target = new URL(url);
  if (target.protocol !== 'ws:' && target.protocol !== 'wss:') throw new TypeError(`url must be ws:// or wss://, got ${target.protocol}`);
  checkRemoteOptions(options);
  checkPositiveInteger('handshakeTimeoutMs', options.handshakeTimeoutMs);
  const reconnect = reconnectSettings(options.reconnect);
  options.signal?.throwIfAborted();
  return connectOpened(target, options, reconnect);
}

/** Opens the socket and runs a connection over it (over a reconnecting stream with `reconnect`). */
async function connectOpened(target: URL, options: ConnectWebSocketOptions, reconnect: ReconnectSettings | undefined): Promise<Connection> {
  const opened = await openWebSocket(target, options);
  const stream = webSocketStream(opened.ws, opened.socket, options);
  if (!reconnect) return remoteConnection(stream, options);
  // Loaded only by a client that reconnects.
  const { ReconnectingWebSocketStream } = require('../resume/reconnecting-websocket') as typeof ReconnectingModule;
  // A resuming upgrade names its connection, which the server lets in without a new client slot.
  const headers = opened.connectionId === undefined ? options.headers : { ...options.headers, [HEADER_CONNECTION_ID]: opened.connectionId };
  const durable = new ReconnectingWebSocketStream(stream, opened.connectionId, reconnect, (signal) =>
    openWebSocket(target, { ...options, headers, signal }).then((next) => webSocketStream(next.ws, next.socket, options)),
  );
  return remoteConnection(durable, options);
}

/** An open WebSocket, its TCP socket, and the `Acp-Connection-Id` its upgrade answer named. @internal */
export interface OpenedWebSocket {
  readonly ws: WebSocket;
  readonly socket: Socket;
  readonly connectionId: string | undefined;
}

/**
 * Opens a WebSocket; resolves once open.
 *
 * @internal
 */
export function openWebSocket(target: URL, options: ConnectWebSocketOptions): Promise<OpenedWebSocket> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  const ws = new WebSocket(target, {
    headers,
    maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD,
    handshakeTimeout: options.handshakeTimeoutMs ?? 30_000,
    perMessageDeflate: false,
    followRedirects: false,
    ca: options.ca,
    rejectUnauthorized: options.rejectUnauthorized,
  });
  return new Promise<OpenedWebSocket>((resolve, reject) => {
    let socket: Socket | undefined;
    let connectionId: string | undefined;
    const fail = (error: unknown): void => {
      cleanup();
      ws.on('error', ignore);
      ws.terminate();
      reject(error);
    };
    const onAbort = (): void => fail(options.signal!.reason);
    const onError = (error: Error): void => fail(error);
    const onUpgrade = (response: IncomingMessage): void => {
      socket = response.socket as Socket;
      const id = response.headers[HEADER_CONNECTION_ID.toLowerCase()];
      connectionId = typeof id === 'string' ? id : undefined;
    };
    const onUnexpected = (_request: unknown, response: IncomingMessage): void => {
      void readBody(response).then((body) =>
        fail(
          new HttpStatusError(response.statusCode ?? 0, body, `the server refused the WebSocket upgrade: ${response.statusCode} ${body}`),
        ),
      );
    };
    const onOpen = (): void => {
      cleanup();
      resolve({ ws, socket: socket!, connectionId });
    };
    const cleanup = (): void => {
      options.signal?.removeEventListener('abort', onAbort);
      ws.removeListener('error', onError);
      ws.removeListener('upgrade', onUpgrade);
      ws.removeListener('unexpected-response', onUnexpected);
      ws.removeListener('open', onOpen);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    ws.on('error', onError);
    ws.on('upgrade', onUpgrade);
    ws.on('unexpected-response', onUnexpected);
    ws.on('open', onOpen);
  });
}

/** The text of a (small) response body, cut to 8 KiB; never rejects. */
export function readBody(response: IncomingMessage, limit = 8192): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
    });
    response.once('end', done);
    response.once('error', done);
    response.once('close', done);
  });
}

function ignore(): void {}
