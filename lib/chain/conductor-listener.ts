/**
 * A conductor for TCP clients: one proxy chain per client, started on the client's first byte,
 * with a bound on how many run at once and an idle timeout. Components named by a URL are
 * connected afresh for each chain.
 *
 * @packageDocumentation
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Connection } from '../connection/connection';
import { describeThrown } from '../jsonrpc/errors';
import { defaultLogger } from '../support/logger';
import { socketConnection, type TcpAddress } from '../transports/tcp';
import { admitSocket, checkIdleTimeout, checkMaxCount, hasWorkInFlight, peerOf, watchIdle } from '../server/bounds';
import type { ConnectUrlOptions } from '../transports/url';
import { resolveSource, type ComponentSource } from './chain-component';
import { Conductor, type ConductorOptions } from './conductor';
import { closeUrlComponents, connectUrlComponents, hasUrlComponent } from './url-components';

/** The default {@link ConductorListenerOptions.maxChains}. */
export const DEFAULT_MAX_CHAINS = 16;
/** The default {@link ConductorListenerOptions.idleTimeoutMs}: five minutes. */
export const DEFAULT_CHAIN_IDLE_TIMEOUT_MS = 300_000;

/** One accepted client: its socket, then its connection and chain from its first byte on. */
interface Client {
  readonly socket: Socket;
  connection: Connection | undefined;
  conductor: Conductor | undefined;
}

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
   * Closes a client (and shuts its chain down) that has carried no byte either way for this long
   * while nothing is in flight — no request of the client, nor of a component to the client, is
   * unanswered —, with a `debug` log line; a client that never sends a byte is closed after as
   * long. Milliseconds; `0` never closes an idle client. Default 300000 (five minutes).
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
}

/** A listening conductor server (see {@link listenConductor}). */
export interface ConductorListener {
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** The underlying server. */
  readonly server: Server;
  /** The chains running now. */
  readonly chains: ReadonlySet<Conductor>;
  /** Stops listening, closes every client and shuts every chain down; resolves once all are. Idempotent. */
  close(): Promise<void>;
  /** `await using listener = await listenConductor(…)`: {@link ConductorListener.close} when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Serves TCP clients a proxy chain each: a {@link Conductor} with the given components, started
 * when the client sends its first byte (a client that never sends one starts nothing).
 *
 * @remarks
 * - Bounded: at most `maxChains` clients at once (default 16) — a socket accepted beyond that is
 *   closed at once —, and a client idle for `idleTimeoutMs` (default five minutes) with nothing in
 *   flight is closed, its chain shut down. See {@link ConductorListenerOptions}.
 * - Each client connection's logger is `logger('client')`; the server's own lines (refused and idle
 *   clients) go to `logger('conductor')`; default `ACP_WIRE_LOG`.
 * - A client's chain ends as a {@link Conductor}'s does; other clients' chains go on.
 *
 * @throws TypeError if `components` is empty or lists an in-process `{ connection }` (one
 * connection cannot serve several chains)
 * @throws RangeError for an invalid port, `maxChains` or `idleTimeoutMs`
 * @throws CommandLineError if a command line cannot be split (nothing listens)
 * @returns resolves once listening; rejects with the listen error (e.g. EADDRINUSE)
 * @example
 * ```ts
 * const listener = await listenConductor({ port: 0 }, { components: ['node agent.js'], maxChains: 4 });
 * console.log(`listening ${listener.port}`);
 * ```
 */
export function listenConductor(address: TcpAddress, options: ConductorListenerOptions): Promise<ConductorListener> {
  const {
    maxChains = DEFAULT_MAX_CHAINS,
    idleTimeoutMs = DEFAULT_CHAIN_IDLE_TIMEOUT_MS,
    onChain,
    onChainFailed,
    urlOptions,
    ...chainOptions
  } = options;
  checkComponents(options.components);
  checkMaxCount('maxChains', maxChains);
  checkIdleTimeout('idleTimeoutMs', idleTimeoutMs);
  if (!Number.isInteger(address.port) || address.port < 0 || address.port > 65535) {
    throw new RangeError(`port must be an integer from 0 to 65535, got ${String(address.port)}`);
  }
  const logger = options.logger?.('conductor') ?? defaultLogger('conductor');
  const clients = new Set<Client>();
  const chains = new Set<Conductor>();
  let isClosing = false;

  const aborter = new AbortController();
  const starting = new Set<Promise<void>>();
  const chainFailed = (client: Client, error: unknown): void => {
    if (onChainFailed) onChainFailed(error);
    else logger.log('error', `could not start a chain for ${peerOf(client.socket)}: ${describeThrown(error)}`);
  };

  const startChain = (client: Client, components: readonly ComponentSource[]): void => {
    const connection = socketConnection(client.socket, { name: 'client', ...(options.logger ? { logger: options.logger('client') } : {}) });
    client.connection = connection;
    try {
      client.conductor = new Conductor({ ...chainOptions, components, client: connection });
    } catch (error) {
      chainFailed(client, error);
      void connection.close();
    } finally {
      // The connection listens for 'data'; leaving paused mode hands it the buffered bytes first.
      client.socket.resume();
    }
    const conductor = client.conductor;
    if (!conductor) return;
    chains.add(conductor);
    void conductor.closed.then(() => chains.delete(conductor));
    onChain?.(conductor);
  };

  /** Connects the URL components first; the client's bytes wait in its socket meanwhile. */
  const connectThenStart = async (client: Client): Promise<void> => {
    const signal = urlOptions?.signal ? AbortSignal.any([urlOptions.signal, aborter.signal]) : aborter.signal;
    let components: ComponentSource[];
    try {
      components = await connectUrlComponents(options.components, { urlOptions: { ...urlOptions, signal }, logger: options.logger });
    } catch (error) {
      if (!isClosing) chainFailed(client, error);
      client.socket.destroy();
      return;
    }
    if (isClosing || client.socket.destroyed) return closeUrlComponents(components);
    startChain(client, components);
  };

  const onFirstClientByte = (client: Client): void => {
    if (!hasUrlComponent(options.components)) return startChain(client, options.components);
    const started = connectThenStart(client).finally(() => starting.delete(started));
    starting.add(started);
  };

  const server = createServer((socket) => {
    if (isClosing) return void socket.destroy();
    if (!admitSocket(socket, clients.size, maxChains, logger, 'client')) return;
    const client: Client = { socket, connection: undefined, conductor: undefined };
    clients.add(client);
    socket.once('close', () => clients.delete(client));
    // Until the chain's connection listens, a reset must not be an unhandled 'error'.
    socket.on('error', ignore);
    const isBusy = (): boolean => client.connection !== undefined && hasWorkInFlight(client.connection);
    watchIdle(socket, idleTimeoutMs, isBusy, () => {
      logger.log('debug', `closed the client ${peerOf(socket)}: idle for ${idleTimeoutMs} ms`);
      if (client.conductor) void client.conductor.close();
      else socket.destroy();
    });
    onFirstByte(socket, () => onFirstClientByte(client));
  });

  const close = async (): Promise<void> => {
    isClosing = true;
    aborter.abort();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const client of clients) if (!client.conductor) client.socket.destroy();
    await Promise.all(starting);
    await Promise.all([...chains].map((chain) => chain.close()));
    await closed;
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host ?? '127.0.0.1', () => {
      server.removeListener('error', reject);
      const port = (server.address() as AddressInfo).port;
      resolve({ port, server, chains, close, [Symbol.asyncDispose]: close });
    });
  });
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
