/**
 * `acp-wire conduct --listen ADDRESS`: where the conductor serves its clients over WebSocket and
 * Streamable HTTP.
 *
 * @packageDocumentation
 */
import { DEFAULT_PATH } from '../transports/remote/limits';
import { UsageError, parsePort } from './arguments';

/** Where `--listen` serves: `PORT`, `HOST:PORT` or `ws://HOST:PORT/PATH`. */
export interface ListenAddress {
  /** The address to bind; `undefined`: 127.0.0.1. */
  host: string | undefined;
  port: number;
  path: string;
}

/**
 * Parses a `--listen` value: `PORT`, `HOST:PORT` (`[::1]:PORT` for IPv6) or `ws://HOST:PORT/PATH`.
 *
 * @throws UsageError naming the value when it is none of these, or its port is not a decimal port
 */
export function parseListen(text: string): ListenAddress {
  if (/^wss?:\/\//i.test(text)) return parseListenUrl(text);
  if (!text.includes(':')) return { host: undefined, port: parsePort('--listen', text), path: DEFAULT_PATH };
  const match = /^(\[[^\]]+\]|[^:[\]]+):([^:]*)$/.exec(text);
  if (!match) throw new UsageError(`--listen needs PORT, HOST:PORT or ws://HOST:PORT/PATH, got ${JSON.stringify(text)}`);
  return { host: unbracket(match[1]!), port: parsePort('--listen', match[2]!), path: DEFAULT_PATH };
}

function parseListenUrl(text: string): ListenAddress {
  if (!URL.canParse(text)) throw new UsageError(`--listen needs PORT, HOST:PORT or ws://HOST:PORT/PATH, got ${JSON.stringify(text)}`);
  const url = new URL(text);
  if (url.protocol !== 'ws:')
    throw new UsageError(`--listen serves ws:// only (put a TLS proxy in front of it for wss://), got ${JSON.stringify(text)}`);
  if (url.search !== '' || url.hash !== '') throw new UsageError(`--listen takes no query or fragment, got ${JSON.stringify(text)}`);
  // The URL parser drops a port equal to the scheme's default (80): read it back from the text.
  const port = url.port === '' ? (/^ws:\/\/(?:\[[^\]]*\]|[^/:]*):(\d+)/i.exec(text)?.[1] ?? '80') : url.port;
  return { host: unbracket(url.hostname), port: parsePort('--listen', port), path: url.pathname === '/' ? DEFAULT_PATH : url.pathname };
}

function unbracket(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

/** The listen URL of an address, for `listenConductor`: `ws://HOST:PORT/PATH`. */
export function listenUrlOf(address: ListenAddress): string {
  const host = address.host ?? '127.0.0.1';
  return `ws://${host.includes(':') ? `[${host}]` : host}:${address.port}${address.path}`;
}
