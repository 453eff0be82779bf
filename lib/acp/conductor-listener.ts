/**
 * A conductor for TCP clients: one proxy chain per client, started on the client's first byte,
 * with a bound on how many run at once and an idle timeout.
 *
 * @packageDocumentation
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Connection } from '../connection';
import { describeThrown } from '../errors';
import { defaultLogger } from '../logger';
import { socketConnection, type TcpAddress } from '../transports/tcp';
import { admitSocket, checkIdleTimeout, checkMaxCount, hasWorkInFlight, peerOf, watchIdle } from '../transports/tcp-limits';
import { resolveSource } from './chain-component';
import { Conductor, type ConductorOptions } from './conductor';

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

/** Options of {@link listenConductor}: those of each chain's {@link Conductor}, and the server's bounds. */
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
  const { maxChains = DEFAULT_MAX_CHAINS, idleTimeoutMs = DEFAULT_CHAIN_IDLE_TIMEOUT_MS, onChain, ...chainOptions } = options;
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

  const startChain = (client: Client): void => {
    const connection = socketConnection(client.socket, { name: 'client', ...(options.logger ? { logger: options.logger('client') } : {}) });
    client.connection = connection;
    try {
      client.conductor = new Conductor({ ...chainOptions, client: connection });
    } catch (error) {
      logger.log('error', `could not start a chain for ${peerOf(client.socket)}: ${describeThrown(error)}`);
      void connection.close();
      return;
    }
    const conductor = client.conductor;
    chains.add(conductor);
    void conductor.closed.then(() => chains.delete(conductor));
    onChain?.(conductor);
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
    onFirstByte(socket, () => startChain(client));
  });

  const close = async (): Promise<void> => {
    isClosing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const client of clients) if (!client.conductor) client.socket.destroy();
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
 * connection reads it); a socket that ends without one is destroyed.
 */
function onFirstByte(socket: Socket, start: () => void): void {
  const onReadable = (): void => {
    socket.removeListener('readable', onReadable);
    if (socket.readableLength === 0) return void socket.destroy();
    start();
    // The connection listens for 'data'; leaving paused mode hands it the buffered bytes first.
    socket.resume();
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
