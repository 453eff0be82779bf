/**
 * Connections over TCP sockets (Nagle off).
 *
 * @packageDocumentation
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Connection, type ConnectionOptions } from '../connection/connection';
import { defaultLogger } from '../support/logger';
import { checkIdleTimeout, checkMaxCount, peerOf } from '../server/bounds';
import { ClientPool, type PooledClient } from '../server/client-pool';

/** Where to connect or listen. */
export interface TcpAddress {
  /** Default `127.0.0.1`. */
  host?: string;
  /** `0` picks a free port when listening. */
  port: number;
}

/** Wraps a connected socket as a {@link Connection}: no Nagle delay; the socket is destroyed once the connection has closed and flushed. */
export function socketConnection(socket: Socket, options: ConnectionOptions = {}): Connection {
  socket.setNoDelay(true);
  const connection = new Connection(socket, socket, options);
  connection.once('close', () => {
    void connection.close().then(() => socket.destroy());
  });
  return connection;
}

/**
 * Connects to a TCP server.
 *
 * @throws RangeError for an invalid port
 * @returns resolves once connected; rejects with the socket's error (e.g. ECONNREFUSED)
 */
export function connectTcp(address: TcpAddress, options: ConnectionOptions = {}): Promise<Connection> {
  checkPort(address.port);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: address.host ?? '127.0.0.1', port: address.port });
    const onError = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.removeListener('error', onError);
      resolve(socketConnection(socket, options));
    });
  });
}

/** A listening TCP server whose accepted sockets are connections. */
export interface TcpListener {
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** The underlying server. */
  readonly server: Server;
  /** Its clients: how many are served, and the `'accepted'`, `'refused'`, `'idle'` and `'closed'` events. */
  readonly pool: ClientPool;
  /** Stops listening and closes every open connection. */
  close(): Promise<void>;
  /** Same as {@link TcpListener.close}, for `await using listener = await listenTcp(…)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The default {@link TcpListenOptions.maxConnections}. */
export const DEFAULT_MAX_CONNECTIONS = 256;

/** Options of {@link listenTcp}: each accepted connection's options, and the server's bounds. */
export interface TcpListenOptions extends ConnectionOptions {
  /**
   * How many connections are served at once; a socket accepted beyond that is closed at once,
   * with a `warn` log line naming its peer. An integer of at least 1, or `Infinity`. Default 256.
   */
  maxConnections?: number;
  /**
   * Closes a connection that has carried no byte either way for this long while nothing is in
   * flight (no request it sent or received is unanswered), with a `debug` log line. Milliseconds;
   * `0` (default) never closes an idle connection.
   */
  idleTimeoutMs?: number;
}

/**
 * Listens for TCP connections; `onConnection` receives one {@link Connection} per accepted socket.
 *
 * @remarks Bounded: at most `maxConnections` at once (default 256); an idle timeout when
 * `idleTimeoutMs` is set. See {@link TcpListenOptions}.
 * @throws RangeError for an invalid port, `maxConnections` or `idleTimeoutMs`
 * @returns resolves once listening; rejects with the listen error (e.g. EADDRINUSE)
 */
export function listenTcp(
  address: TcpAddress,
  onConnection: (connection: Connection, socket: Socket) => void,
  options: TcpListenOptions = {},
): Promise<TcpListener> {
  checkPort(address.port);
  const { maxConnections = DEFAULT_MAX_CONNECTIONS, idleTimeoutMs = 0, ...connectionOptions } = options;
  checkMaxCount('maxConnections', maxConnections);
  checkIdleTimeout('idleTimeoutMs', idleTimeoutMs);
  const logger = options.logger ?? defaultLogger(options.name);
  const pool = new ClientPool({ maxClients: maxConnections, idleTimeoutMs });
  pool.on('refused', (refusal) => {
    if (refusal.code === 'ACP_WIRE_CLIENT_LIMIT')
      logger.log('warn', `refused a client from ${refusal.peer}: connection limit reached (${refusal.open} open)`);
  });
  pool.on('idle', (client) => logger.log('debug', `closed the connection from ${client.peer}: idle for ${idleTimeoutMs} ms`));
  return serveTcpClients(address, pool, (socket, client) => {
    const connection = socketConnection(socket, connectionOptions);
    client.attach(connection);
    client.watchIdle(socket);
    onConnection(connection, socket);
  });
}

/**
 * Listens on `address` and hands each accepted socket that `pool` admits to `onClient`, its
 * transport bound (destroyed when the client is closed); a refused socket is destroyed at once.
 *
 * @remarks Closing the listener stops listening, closes `pool` and resolves once both are done.
 * @returns resolves once listening; rejects with the listen error (e.g. EADDRINUSE)
 * @internal
 */
export function serveTcpClients(
  address: TcpAddress,
  pool: ClientPool,
  onClient: (socket: Socket, client: PooledClient) => void,
): Promise<TcpListener> {
  const server = createServer((socket) => {
    const client = pool.admit(peerOf(socket));
    if (!client) return void socket.destroy();
    client.bind(socket, () => void socket.destroy());
    onClient(socket, client);
  });
  const close = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await pool.close();
    await closed;
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host ?? '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve({ port: (server.address() as AddressInfo).port, server, pool, close, [Symbol.asyncDispose]: close });
    });
  });
}

/** @throws RangeError unless `port` is an integer from 0 to 65535 @internal */
export function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
}
