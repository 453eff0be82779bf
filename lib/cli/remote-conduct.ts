/**
 * `acp-wire conduct --listen`: the client connects over WebSocket or Streamable HTTP, one chain
 * per client connection.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import type { Logger } from '../support/logger';
import { DEFAULT_PATH } from '../transports/remote/limits';
import { listenRemoteStreams, type RemoteListener } from '../transports/remote/remote-server';
import { remoteConnection } from '../transports/remote/websocket';
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

/** Options of {@link listenForClients}. */
export interface ListenForClientsOptions {
  /** Clients served at once; more are refused 503. */
  maxClients: number;
  /** The bearer token clients must send, if any. */
  token: string | undefined;
  /** The logger of each client connection (`client`) and of the server's refusals (`conductor`). */
  logger: (name: string) => Logger;
}

/**
 * Listens for clients over WebSocket and Streamable HTTP, and prints `listening ws://HOST:PORT/PATH` on stdout once ready. `onClient` gets a function that
 * opens the client's connection: until it is called, what the client sends waits in its stream.
 * Closing the listener closes every client connection.
 */
export async function listenForClients(
  address: ListenAddress,
  options: ListenForClientsOptions,
  onClient: (openClient: () => Connection) => void,
): Promise<RemoteListener> {
  const { token } = options;
  const clientOptions = { name: 'client', logger: options.logger('client') };
  const clients = new Set<Connection>();
  const listener = await listenRemoteStreams(
    {
      host: address.host,
      port: address.port,
      path: address.path,
      token,
      maxClients: options.maxClients,
      logger: options.logger('conductor'),
    },
    (stream) =>
      onClient(() => {
        const client = remoteConnection(stream, clientOptions);
        clients.add(client);
        client.once('close', () => clients.delete(client));
        return client;
      }),
  );
  process.stdout.write(`listening ${listener.url}\n`);
  const close = async (): Promise<void> => {
    // The connections first: their queued answers are flushed before the sockets close.
    await Promise.all([...clients].map((client) => client.close()));
    await listener.close();
  };
  return Object.defineProperties(
    { ...listener, close, [Symbol.asyncDispose]: close },
    {
      clientCount: { get: () => listener.clientCount, enumerable: true },
    },
  );
}
