/**
 * Connecting to a peer named by a URL: `ws://`, `wss://`, `http://`, `https://` or `tcp://host:port`.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import type * as HttpClientModule from './remote/http/http-client';
import type { ConnectHttpOptions } from './remote/http/http-client';
import type * as TcpModule from './tcp';
import type * as WebSocketModule from './remote/websocket/websocket';
import type { ConnectWebSocketOptions } from './remote/websocket/websocket';

/** The URL schemes {@link connectUrl} understands. */
export const PEER_URL_SCHEMES = ['ws:', 'wss:', 'http:', 'https:', 'tcp:'] as const;

/** Options of {@link connectUrl}: those of the transport the URL names (the TCP transport takes the connection options only). */
export type ConnectUrlOptions = ConnectWebSocketOptions & ConnectHttpOptions;

/** Whether `text` is a URL {@link connectUrl} can connect to (as opposed to, say, a command line). */
export function isPeerUrl(text: string): boolean {
  if (!/^[a-z]+:\/\//i.test(text) || !URL.canParse(text)) return false;
  return (PEER_URL_SCHEMES as readonly string[]).includes(new URL(text).protocol);
}

/**
 * Connects to the peer a URL names: WebSocket (`ws://`, `wss://`), Streamable HTTP (`http://`,
 * `https://`; nothing is sent before the first request, which must be `initialize`) or plain
 * NDJSON over TCP (`tcp://host:port`).
 *
 * @throws TypeError for a URL of another scheme, or a `tcp://` URL without a port
 * @returns resolves once connected; rejects with the transport's error (refusal, ECONNREFUSED, …)
 * @example
 * ```ts
 * const agent = await connectUrl('ws://127.0.0.1:4000/acp');
 * ```
 */
export async function connectUrl(url: string | URL, options: ConnectUrlOptions = {}): Promise<Connection> {
  const target = new URL(url);
  switch (target.protocol) {
    case 'ws:':
    case 'wss:':
      // Each transport (the remote ones with `ws`) is loaded on first use: a process that only
      // checks `isPeerUrl` (the CLI's conduct path) loads none, one that connects over TCP no `ws`.
      return (require('./remote/websocket/websocket') as typeof WebSocketModule).connectWebSocket(target, options);
    case 'http:':
    case 'https:':
      return (require('./remote/http/http-client') as typeof HttpClientModule).connectHttp(target, options);
    case 'tcp:': {
      if (target.port === '') throw new TypeError(`a tcp:// URL needs a port, got ${target.href}`);
      const {
        maxPayload,
        heartbeat: _heartbeat,
        headers: _headers,
        token: _token,
        signal: _signal,
        ca: _ca,
        rejectUnauthorized: _r,
        handshakeTimeoutMs: _h,
        reconnect: _reconnect,
        ...rest
      } = options;
      return (require('./tcp') as typeof TcpModule).connectTcp(
        { host: target.hostname.replace(/^\[|\]$/g, ''), port: Number(target.port) },
        { ...rest, maxLineBytes: maxPayload },
      );
    }
    default:
      throw new TypeError(`cannot connect to a ${target.protocol} URL: use ws://, wss://, http://, https:// or tcp://`);
  }
}
