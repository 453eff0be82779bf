/**
 * Where a server listens, named by a URL: `tcp://HOST:PORT` (NDJSON over TCP) or
 * `ws://HOST:PORT/PATH` / `http://HOST:PORT/PATH` (WebSocket and Streamable HTTP on one port).
 *
 * @packageDocumentation
 */
import { DEFAULT_PATH } from './remote/limits';
import type { TcpAddress } from './tcp';

/** A listen URL, parsed: a TCP address, or the host, port and path of a remote server. */
export type ListenTarget =
  | { readonly transport: 'tcp'; readonly address: TcpAddress }
  | { readonly transport: 'remote'; readonly host: string; readonly port: number; readonly path: string };

/**
 * Parses a listen URL. The port is required for `tcp://` and defaults to 80 otherwise; the path
 * of a `ws://` or `http://` URL defaults to `/acp`.
 *
 * @throws TypeError naming the URL when it is not one, its scheme is another, or it has a query
 * or fragment
 */
export function parseListenUrl(text: string): ListenTarget {
  if (typeof text !== 'string' || !URL.canParse(text)) throw new TypeError(`a listen URL is needed, got ${JSON.stringify(text)}`);
  const url = new URL(text);
  if (url.search !== '' || url.hash !== '') throw new TypeError(`a listen URL takes no query or fragment, got ${text}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  switch (url.protocol) {
    case 'tcp:':
      if (url.port === '') throw new TypeError(`a tcp:// listen URL needs a port, got ${text}`);
      return { transport: 'tcp', address: { host, port: Number(url.port) } };
    case 'ws:':
    case 'http:':
      return {
        transport: 'remote',
        host,
        port: url.port === '' ? 80 : Number(url.port),
        path: url.pathname === '/' ? DEFAULT_PATH : url.pathname,
      };
    default:
      throw new TypeError(`cannot listen on a ${url.protocol} URL: use tcp://, ws:// or http:// (put a TLS proxy in front for wss://)`);
  }
}
