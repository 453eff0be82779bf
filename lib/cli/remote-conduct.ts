/**
 * The network parts of `acp-wire conduct`: components named by a URL (an agent or proxy already
 * running elsewhere) and `--listen` (the client connects over WebSocket or Streamable HTTP).
 *
 * @packageDocumentation
 */
import type { ComponentSource } from '../acp/chain-component';
import type { Connection } from '../connection';
import type { Logger } from '../logger';
import { DEFAULT_PATH } from '../transports/limits';
import { listenRemoteStreams, type RemoteListener } from '../transports/remote-server';
import { remoteConnection } from '../transports/websocket';
import { connectUrl, isPeerUrl } from '../transports/url';

/** Where `--listen` serves: `PORT`, `HOST:PORT` or `ws://HOST:PORT/PATH`. */
export interface ListenAddress {
  host: string | undefined;
  port: number;
  path: string;
}

/**
 * Parses a `--listen` value.
 *
 * @throws RangeError naming the value when it is none of the accepted forms
 */
export function parseListen(text: string): ListenAddress {
  if (/^\d+$/.test(text)) return checked({ host: undefined, port: Number(text), path: DEFAULT_PATH }, text);
  if (/^wss?:\/\//.test(text)) {
    const url = new URL(text);
    if (url.protocol !== 'ws:') throw new RangeError(`--listen serves ws:// only (put TLS in front of it), got ${text}`);
    const path = url.pathname === '/' ? DEFAULT_PATH : url.pathname;
    return checked({ host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port === '' ? 80 : Number(url.port), path }, text);
  }
  const match = /^(.+):(\d+)$/.exec(text);
  if (!match) throw new RangeError(`--listen needs PORT, HOST:PORT or ws://HOST:PORT/PATH, got ${text}`);
  return checked({ host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]), path: DEFAULT_PATH }, text);
}

function checked(address: ListenAddress, text: string): ListenAddress {
  if (!Number.isInteger(address.port) || address.port > 65535) throw new RangeError(`--listen: bad port in ${text}`);
  return address;
}

/**
 * Connects every component named by a URL (`ws://`, `wss://`, `http://`, `https://`,
 * `tcp://`); other components (command lines) are returned as they are.
 *
 * @remarks Sends `ACP_WIRE_TOKEN` as the bearer token when it is set. If one connection fails,
 * those already made are closed and the error is thrown.
 */
export async function connectComponents(commands: readonly string[], logger?: (name: string) => Logger): Promise<ComponentSource[]> {
  const token = process.env.ACP_WIRE_TOKEN || undefined;
  const last = commands.length - 1;
  const opened: Connection[] = [];
  try {
    return await Promise.all(
      commands.map(async (command, index) => {
        if (!isPeerUrl(command)) return command;
        const name = index === last ? 'agent' : `proxy${index + 1}`;
        const connection = await connectUrl(command, { token, name, ...(logger ? { logger: logger(name) } : {}) });
        opened.push(connection);
        return { connection, name };
      }),
    );
  } catch (error) {
    await Promise.all(opened.map((connection) => connection.close()));
    throw error;
  }
}

/**
 * Listens for clients over WebSocket and Streamable HTTP (the token from `ACP_WIRE_TOKEN`), and
 * prints `listening ws://HOST:PORT/PATH` on stdout once ready. `onClient` gets a function that
 * opens the client's connection: until it is called, what the client sends waits in its socket.
 */
export async function listenForClients(
  address: ListenAddress,
  onClient: (openClient: () => Connection) => void,
  logger: Logger | undefined,
): Promise<RemoteListener> {
  const options = { host: address.host, port: address.port, path: address.path, token: process.env.ACP_WIRE_TOKEN || undefined, name: 'client', ...(logger ? { logger } : {}) };
  const clients = new Set<Connection>();
  const listener = await listenRemoteStreams(options, (stream) =>
    onClient(() => {
      const client = remoteConnection(stream, options);
      clients.add(client);
      client.once('close', () => clients.delete(client));
      return client;
    }),
  );
  process.stdout.write(`listening ${listener.url}\n`);
  const close = async (): Promise<void> => {
    await Promise.all([...clients].map((client) => client.close()));
    await listener.close();
  };
  return { ...listener, close, [Symbol.asyncDispose]: close };
}
