/**
 * A conductor for clients of a server: one proxy chain per client, over TCP (started on the
 * client's first byte) or over WebSocket and Streamable HTTP, with a bound on how many run at once
 * and an idle timeout. Components named by a URL are connected afresh for each chain.
 *
 * @packageDocumentation
 */
import type { Server, Socket } from 'node:net';
import { defaultLogger, type Logger } from '../support/logger';
import { checkIdleTimeout, checkMaxCount } from '../server/bounds';
import { ClientPool } from '../server/client-pool';
import { parseListenUrl } from '../transports/listen-url';
import { serveRemoteClients, type RemoteServerOptions } from '../transports/remote/http/remote-server';
import { DEFAULT_HTTP_IDLE_TIMEOUT_MS } from '../transports/remote/http/http-idle';
import { remoteConnection } from '../transports/remote/remote-connection';
import { checkPort, serveTcpClients, socketConnection, type TcpAddress } from '../transports/tcp';
import type { ConnectUrlOptions } from '../transports/url';
import { resolveSource, type ComponentSource } from './chain-component';
import { ChainStarter } from './chain-starter';
import type { Conductor, ConductorOptions } from './conductor';

import { DEFAULT_CHAIN_IDLE_TIMEOUT_MS, DEFAULT_MAX_CHAINS } from './listener-defaults';

export { DEFAULT_CHAIN_IDLE_TIMEOUT_MS, DEFAULT_MAX_CHAINS };

/**
 * Options of {@link listenConductor}: those of each chain's {@link Conductor}, and the server's bounds.
 * A component may also be a URL (`ws://…`, `wss://…`, `http://…`, `https://…`, `tcp://host:port`):
 * an agent or proxy already running elsewhere, connected for each chain before the client's bytes
 * are read.
 */
export interface ConductorListenerOptions extends Omit<ConductorOptions, 'client'> {
  /**
   * How many clients are served at once, chains started or not; a socket accepted beyond that is
   * closed at once, with a `warn` log line naming its peer. An integer of at least 1, or
   * `Infinity`. Default 16.
   */
  maxChains?: number;
  /**
   * Closes a TCP client (and shuts its chain down) that has carried no byte either way for this
   * long while nothing is in flight — no request of the client, nor of a component to the client,
   * is unanswered —, with a `debug` log line; a client that never sends a byte is closed after as
   * long. Milliseconds; `0` never closes an idle client. Default 300000 (five minutes). Not applied
   * to WebSocket and Streamable HTTP clients: their heartbeat and output timeout end a client that
   * vanished, and `remote.httpIdleTimeoutMs` a Streamable HTTP connection that was abandoned.
   */
  idleTimeoutMs?: number;
  /** Called with each chain once it has started (on its client's first byte). */
  onChain?: (conductor: Conductor) => void;
  /**
   * Called when a client's chain could not be started: a component named by a URL could not be
   * connected (a `ComponentConnectionError`), or the chain itself could not be made. That client
   * is closed; the others go on. Without it, an `error` line is logged on `logger('conductor')`.
   */
  onChainFailed?: (error: unknown) => void;
  /** How components named by a URL are connected (e.g. `{ token }`), for each chain. */
  urlOptions?: ConnectUrlOptions;
  /**
   * Makes, for each chain, one more component placed just before the agent: an in-process proxy
   * of that chain's own (e.g. `mcpBridgeComponent().component`). Closed with its chain, or at once
   * when the chain cannot be made.
   */
  beforeAgent?: () => ComponentSource;
  /**
   * With a `ws://` or `http://` listen URL: who may connect (`token`, `allowedOrigins`), the
   * transports offered, and the WebSocket and Streamable HTTP limits.
   */
  remote?: RemoteConductorOptions;
}

/** The options of a conductor's WebSocket and Streamable HTTP server (see {@link ConductorListenerOptions.remote}). */
export type RemoteConductorOptions = Omit<RemoteServerOptions, 'host' | 'port' | 'path' | 'maxClients' | 'logger' | 'name'>;

/** A listening conductor server (see {@link listenConductor}). */
export interface ConductorListener {
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /**
   * The URL clients connect to: `tcp://HOST:PORT`, or `ws://HOST:PORT/PATH` for a WebSocket and
   * Streamable HTTP server (the same port and path take `http://`).
   */
  readonly url: string;
  /** The underlying server (an `http.Server` for WebSocket and Streamable HTTP). */
  readonly server: Server;
  /** Its clients: how many are served, and the `'accepted'`, `'refused'`, `'idle'` and `'closed'` events. */
  readonly pool: ClientPool;
  /** The chains running now. */
  readonly chains: ReadonlySet<Conductor>;
  /** Stops listening, closes every client and shuts every chain down; resolves once all are. Idempotent. */
  close(): Promise<void>;
  /** `await using listener = await listenConductor(…)`: {@link ConductorListener.close} when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Serves clients a proxy chain each: a {@link Conductor} with the given components, for each
 * client of a TCP server, or of a WebSocket and Streamable HTTP server.
 *
 * @remarks
 * - Where: a {@link TcpAddress} or a `tcp://HOST:PORT` URL serves NDJSON over TCP; the chain starts
 *   when the client sends its first byte (a client that never sends one starts nothing). A
 *   `ws://HOST:PORT/PATH` or `http://HOST:PORT/PATH` URL serves WebSocket and Streamable HTTP on
 *   that port and path (see `listenRemote`); the chain starts with the client's connection.
 * - Bounded: at most `maxChains` clients at once (default 16) — a client beyond that is refused
 *   at once (a TCP socket is closed, a WebSocket upgrade or an `initialize` POST is answered
 *   503) —, and a TCP client idle for `idleTimeoutMs` (default five minutes) with nothing in
 *   flight is closed, its chain shut down. See {@link ConductorListenerOptions}.
 * - Each client connection's logger is `logger('client')`; the server's own lines (refused and idle
 *   clients) go to `logger('conductor')`; default `ACP_WIRE_LOG`.
 * - A client's chain ends as a {@link Conductor}'s does; other clients' chains go on.
 *
 * @throws TypeError if `components` is empty or lists an in-process `{ connection }` (one
 * connection cannot serve several chains), or for a listen URL that is not `tcp://`, `ws://` or
 * `http://`
 * @throws RangeError for an invalid port, `maxChains` or `idleTimeoutMs`
 * @throws CommandLineError if a command line cannot be split (nothing listens)
 * @returns resolves once listening; rejects with the listen error (e.g. EADDRINUSE)
 * @example
 * ```ts
 * const tcp = await listenConductor({ port: 0 }, { components: ['node agent.js'], maxChains: 4 });
 * const ws = await listenConductor('ws://127.0.0.1:0/acp', { components: ['node agent.js'], remote: { token } });
 * console.log(`listening ${tcp.url} and ${ws.url}`);
 * ```
 */
export function listenConductor(address: TcpAddress | string, options: ConductorListenerOptions): Promise<ConductorListener> {
  const {
    maxChains = DEFAULT_MAX_CHAINS,
    idleTimeoutMs = DEFAULT_CHAIN_IDLE_TIMEOUT_MS,
    onChain,
    onChainFailed,
    urlOptions,
    beforeAgent,
  } = options;
  const { remote, maxChains: _m, idleTimeoutMs: _i, onChain: _c, onChainFailed: _f, urlOptions: _u, beforeAgent: _b, ...chain } = options;
  if (beforeAgent !== undefined && typeof beforeAgent !== 'function') throw new TypeError('beforeAgent must be a function');
  checkComponents(options.components);
  checkMaxCount('maxChains', maxChains);
  checkIdleTimeout('idleTimeoutMs', idleTimeoutMs);
  const target = typeof address === 'string' ? parseListenUrl(address) : { transport: 'tcp' as const, address };
  if (target.transport === 'tcp') checkPort(target.address.port);
  const logger = options.logger?.('conductor') ?? defaultLogger('conductor');
  const isTcp = target.transport === 'tcp';
  const pool = new ClientPool({ maxClients: maxChains, idleTimeoutMs: isTcp ? idleTimeoutMs : 0 });
  logPool(pool, logger, isTcp ? idleTimeoutMs : (options.remote?.httpIdleTimeoutMs ?? DEFAULT_HTTP_IDLE_TIMEOUT_MS));
  const starter = new ChainStarter(pool, { chain, urlOptions, onChain, onChainFailed, beforeAgent, logger });
  const clientOptions = { name: 'client', ...(options.logger ? { logger: options.logger('client') } : {}) };
  if (target.transport === 'tcp') return serveTcpChains(target.address, pool, starter, clientOptions);
  const { host, port, path } = target;
  const listening = serveRemoteClients({ ...remote, host, port, path, maxClients: maxChains, logger }, pool, (stream, _info, client) => {
    const open = () => remoteConnection(stream, { ...remote, ...clientOptions });
    starter.start({ client, open, drop: () => void open().close() });
  });
  return listening.then((listener) => conductorListener(listener, listener.url, starter));
}

/** The TCP side of {@link listenConductor}: a client's socket waits, paused, for its first byte. */
function serveTcpChains(
  address: TcpAddress,
  pool: ClientPool,
  starter: ChainStarter,
  clientOptions: { name: string; logger?: Logger },
): Promise<ConductorListener> {
  const listening = serveTcpClients(address, pool, (socket, client) => {
    // Until the chain's connection listens, a reset must not be an unhandled 'error'.
    socket.on('error', ignore);
    client.watchIdle(socket);
    onFirstByte(socket, () =>
      starter.start({
        client,
        open: () => socketConnection(socket, clientOptions),
        // The connection listens for 'data'; leaving paused mode hands it the buffered bytes first.
        ready: () => void socket.resume(),
        drop: () => void socket.destroy(),
      }),
    );
  });
  return listening.then((listener) => conductorListener(listener, `tcp://${hostOf(address)}:${listener.port}`, starter));
}

/** A conductor listener over a transport's listener. */
function conductorListener(
  listener: { port: number; server: Server; pool: ClientPool; close(): Promise<void> },
  url: string,
  starter: ChainStarter,
): ConductorListener {
  const close = (): Promise<void> => listener.close();
  return {
    port: listener.port,
    url,
    server: listener.server,
    pool: listener.pool,
    chains: starter.chains,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Logs a conductor server's refused and idle clients. */
function logPool(pool: ClientPool, logger: Logger, idleTimeoutMs: number): void {
  pool.on('refused', (refusal) => {
    if (refusal.code === 'ACP_WIRE_CLIENT_LIMIT')
      logger.log('warn', `refused a client from ${refusal.peer}: client limit reached (${refusal.open} open)`);
  });
  pool.on('idle', (client) => logger.log('debug', `closed the client ${client.peer}: idle for ${idleTimeoutMs} ms`));
}

function hostOf(address: TcpAddress): string {
  const host = address.host ?? '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Calls `start` once the socket has a first byte to read, without reading it (the chain's
 * connection reads it, once `start` has made it); a socket that ends without one is destroyed.
 */
function onFirstByte(socket: Socket, start: () => void): void {
  const onReadable = (): void => {
    socket.removeListener('readable', onReadable);
    if (socket.readableLength === 0) return void socket.destroy();
    start();
  };
  socket.on('readable', onReadable);
}

function checkComponents(components: ConductorListenerOptions['components']): void {
  if (!Array.isArray(components) || components.length === 0) throw new TypeError('components must list at least the agent');
  for (const source of components) {
    if (typeof source === 'object' && source !== null && 'connection' in source) {
      throw new TypeError('listenConductor needs commands: one in-process connection cannot serve several chains');
    }
    resolveSource(source);
  }
}

function ignore(): void {}
