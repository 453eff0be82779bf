/**
 * Connections over TCP sockets (Nagle off).
 *
 * @packageDocumentation
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Connection, type ConnectionOptions } from '../connection/connection';
import { defaultLogger } from '../support/logger';
import { admitSocket, checkIdleTimeout, checkMaxCount, hasWorkInFlight, peerOf, watchIdle } from '../server/bounds';

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
  const open = new Set<Connection>();
  const server = createServer((socket) => {
    if (!admitSocket(socket, open.size, maxConnections, logger, 'connection')) return;
    const connection = socketConnection(socket, connectionOptions);
    open.add(connection);
    connection.once('close', () => open.delete(connection));
    watchIdle(
      socket,
      idleTimeoutMs,
      () => hasWorkInFlight(connection),
      () => {
        logger.log('debug', `closed the connection from ${peerOf(socket)}: idle for ${idleTimeoutMs} ms`);
        void connection.close();
      },
    );
    onConnection(connection, socket);
  });
  const close = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all([...open].map((connection) => connection.close()));
    await closed;
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host ?? '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve({ port: (server.address() as AddressInfo).port, server, close, [Symbol.asyncDispose]: close });
    });
  });
}

function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
}
