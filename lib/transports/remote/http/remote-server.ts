/**
 * The network server: WebSocket upgrades and Streamable HTTP on one path of one HTTP server,
 * behind the origin and token checks. Each client is its own byte stream (and `Connection`).
 *
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Connection } from '../../../connection/connection';
import { defaultLogger } from '../../../support/logger';
import { HttpPathServer, connectionIdInPath } from './http-path-server';
import { HttpStreamServer } from './http-server';
import type { HttpServerLimits } from './http-server-stream';
import {
  DEFAULT_PATH,
  RETRY_AFTER_SECONDS,
  checkAccess,
  checkAccessOptions,
  checkExposure,
  checkPath,
  checkPort,
  pathOf,
  type AccessOptions,
} from '../limits';
import { checkIdleTimeout, checkMaxCount, peerOf } from '../../../server/bounds';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../../../server/drain-timeout';
import { DEFAULT_HOST } from '../../../server/loopback';
import { DEFAULT_HTTP_IDLE_TIMEOUT_MS } from './http-idle';
import { ClientPool, type DrainResult, type PooledClient } from '../../../server/client-pool';
import type { WorkProbe } from '../../../server/work-probe';
import {
  HEADER_CONNECTION_ID,
  checkRemoteOptions,
  remoteConnection,
  type RemoteClientInfo,
  type RemoteConnectionOptions,
  type RemoteTransport,
} from '../remote-connection';
import { ResumableServerStream } from '../resume/resumable-websocket';
import { resumeSettings, type ResumeOptions } from '../resume/resume-options';
import { webSocketServer, type WebSocketSink } from '../websocket/websocket-server';

/** The certificate a {@link listenRemote} server presents to serve `wss://` and `https://` itself. */
export interface RemoteTlsOptions {
  /** The certificate chain in PEM (the server's certificate first), e.g. `readFileSync('cert.pem')`. */
  cert: string | Buffer;
  /** Its private key in PEM. */
  key: string | Buffer;
  /** The passphrase of an encrypted `key`. */
  passphrase?: string;
}

/** Options of {@link listenRemote} and {@link listenRemoteStreams}. */
export interface RemoteServerOptions extends RemoteConnectionOptions, AccessOptions, HttpServerLimits {
  /**
   * The address to bind. Default `127.0.0.1` (this machine only); `0.0.0.0` or `::` for every
   * interface. Any address but a loopback one needs a `token` (or `insecureNoToken: true`).
   */
  host?: string;
  /** The port; `0` (default) picks a free one. */
  port?: number;
  /** The path clients connect to. Default `/acp`. */
  path?: string;
  /**
   * Serves TLS with this certificate: clients then connect with `wss://` and `https://` (no
   * reverse proxy needed). Default: none (`ws://` and `http://`).
   *
   * @remarks TLS encrypts the traffic, the bearer token included; it does not authenticate the
   * clients: a server other machines can reach still needs a `token`.
   */
  tls?: RemoteTlsOptions;
  /** The transports offered. Default both: WebSocket upgrades and Streamable HTTP on the same path. */
  transports?: readonly RemoteTransport[];
  /**
   * How many clients are connected at once. A new client beyond that (a WebSocket upgrade, or a
   * Streamable HTTP `initialize` POST) is refused **503** before any stream exists, with a `warn`
   * line on `logger` naming its peer. An integer of at least 1, or `Infinity` (default).
   */
  maxClients?: number;
  /**
   * Makes connections resumable, and says so in each `initialize` answer
   * (`capabilities.transport.resumable`): every agent message carries a cursor
   * (`_meta["acp/cursor"]`, and the SSE `id:`), the last ones are held in a replay buffer, and a
   * connection whose stream drops is kept `graceMs` for its client to resume it (WebSocket: a
   * `stream/resume` first frame on a new socket; Streamable HTTP: `Last-Event-ID`). `true`: the
   * defaults. Default off: a dropped WebSocket ends its connection at once.
   */
  resume?: ResumeOptions | boolean;
}

/**
 * The path on every {@link listenRemote} server that answers a load balancer's health probe
 * (`GET` or `HEAD`, no token needed): see {@link RemoteListener.health}.
 */
export const HEALTH_PATH = '/healthz';

/**
 * What a {@link listenRemote} server tells a load balancer: `'ready'` (it takes new clients),
 * `'full'` (`maxClients` are served) or `'draining'` (it takes no new clients: see
 * {@link RemoteListener.drain}).
 */
export type RemoteHealth = 'ready' | 'full' | 'draining';

/** Options of {@link RemoteListener.drain}. */
export interface RemoteDrainOptions {
  /**
   * How long a client with a request in flight (either way) may take to see it answered before it
   * is closed all the same, in milliseconds. Default 30 000; `0`: at once.
   */
  timeoutMs?: number;
}

export { DEFAULT_DRAIN_TIMEOUT_MS };

/** A listening network server. */
export interface RemoteListener {
  /** The bound address. */
  readonly host: string;
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** The WebSocket URL clients use, e.g. `ws://127.0.0.1:4000/acp` (`wss://` with `tls`). */
  readonly url: string;
  /** The Streamable HTTP URL, e.g. `http://127.0.0.1:4000/acp` (`https://` with `tls`). */
  readonly httpUrl: string;
  /** The underlying HTTP server. */
  readonly server: Server;
  /** Number of clients connected now. */
  readonly clientCount: number;
  /** Its clients: how many are served, and the `'accepted'`, `'refused'` and `'closed'` events. */
  readonly pool: ClientPool;
  /**
   * What `GET /healthz` answers now: `ready` (200), `full` (503) or `draining` (503).
   *
   * @remarks The health path needs no token and no allowed origin, whatever the server's access
   * options: a balancer probes without them. Its answer is that one word (`text/plain`, not
   * cached) and nothing else.
   */
  readonly health: RemoteHealth;
  /**
   * Stops taking new clients (a WebSocket upgrade or an `initialize` POST gets 503 with
   * `Retry-After`; health says `draining`), closes each client once it has no request in flight
   * either way (an idle one at once), and at `timeoutMs` closes the rest all the same (cut).
   * Resolves once every client is gone, with how many were cut.
   *
   * @remarks A WebSocket is closed 1001 (going away), a Streamable HTTP connection as by its
   * `DELETE`. Still listening afterwards (health keeps saying `draining`): call
   * {@link RemoteListener.close} next. Idempotent. For a client of {@link listenRemoteStreams}, a
   * request in flight is one its `onStream` probe reports; a client without one is idle.
   * @throws RangeError naming `timeoutMs` when invalid
   */
  drain(options?: RemoteDrainOptions): Promise<DrainResult>;
  /** Stops listening, closes every client (WebSocket close 1001) and resolves once every socket is gone. */
  close(): Promise<void>;
  /** Same as {@link RemoteListener.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** How long a closing WebSocket may take to finish its close handshake before it is cut. */
const CLOSE_GRACE_MS = 2000;

/**
 * Listens for remote clients and hands each one over as a byte stream of NDJSON lines (one per
 * message), e.g. to pipe it into an agent process's stdio.
 *
 * @remarks
 * Safe by default: binds `127.0.0.1` unless `host` is given, and refuses to listen on an address
 * other machines can reach without a `token` (unless `insecureNoToken`); a request with an `Origin` header
 * that is not in `allowedOrigins` is refused 403 and one without the right bearer token (when
 * `token` is set) 401, before any stream exists; another path is 404; a client beyond
 * `maxClients` is 503 with `Retry-After`. Destroying the stream closes that client. A Streamable
 * HTTP connection with no event stream open and no POST in progress for `httpIdleTimeoutMs`
 * (default one minute) was abandoned: it is closed with `'idle'` on `listener.pool`, its stream
 * ended as on a `DELETE` and destroyed if it has not closed two seconds later. `onStream` may
 * return a {@link WorkProbe} of the client's requests in flight (e.g. a `LineWorkTracker` from `acp-wire/server`
 * fed the lines both ways), which {@link RemoteListener.drain} waits for.
 * @throws TypeError or RangeError for an invalid option; Node's TLS error when `tls` holds no
 * valid certificate and key pair
 * @returns resolves once listening; rejects with the listen error (e.g. EADDRINUSE)
 */
export async function listenRemoteStreams(
  options: RemoteServerOptions,
  onStream: (stream: Duplex, info: RemoteClientInfo) => WorkProbe | void,
): Promise<RemoteListener> {
  return serveRemoteClients(options, remotePool(options), (stream, info, client) => {
    const probe = onStream(stream, info);
    if (probe) client.trackWork(probe);
  });
}

/**
 * Listens for remote clients (WebSocket and Streamable HTTP); `onConnection` receives one
 * {@link Connection} per client, with its own state.
 *
 * @remarks
 * See {@link listenRemoteStreams} for what is refused. Each WebSocket is one connection; each
 * Streamable HTTP connection (from its `initialize` POST to its `DELETE`, or to
 * `httpIdleTimeoutMs` without an event stream or a POST) is one connection. Closing the listener,
 * or an abandoned Streamable HTTP connection, closes the connection here (`closed locally`):
 * its pending requests reject with `ConnectionClosedError`.
 * @throws TypeError or RangeError for an invalid option
 * @returns resolves once listening; rejects with the listen error (e.g. EADDRINUSE)
 * @example
 * ```ts
 * const listener = await listenRemote({ port: 4000, token: process.env.ACP_TOKEN }, (connection) => serveMyAgent(connection));
 * console.log(`listening ${listener.url}`); // ws://127.0.0.1:4000/acp
 * ```
 */
export async function listenRemote(
  options: RemoteServerOptions,
  onConnection: (connection: Connection, info: RemoteClientInfo) => void,
): Promise<RemoteListener> {
  return serveRemoteClients(options, remotePool(options), (stream, info, client) => {
    const connection = remoteConnection(stream, options);
    client.attach(connection);
    onConnection(connection, info);
  });
}

/** The pool of a remote server bounded by `maxClients`, logging its refusals and abandoned clients on `options.logger`. */
function remotePool(options: RemoteServerOptions): ClientPool {
  const pool = new ClientPool({ maxClients: options.maxClients ?? Number.POSITIVE_INFINITY });
  const logger = options.logger ?? defaultLogger('server');
  pool.on('refused', (refusal) => {
    if (refusal.code === 'ACP_WIRE_CLIENT_LIMIT')
      logger.log('warn', `refused a client from ${refusal.peer}: client limit reached (${refusal.open} open)`);
  });
  // A resumable connection's idle limit is its grace period.
  const idleMs = resumeSettings(options.resume)?.graceMs ?? options.httpIdleTimeoutMs ?? DEFAULT_HTTP_IDLE_TIMEOUT_MS;
  pool.on('idle', (client) =>
    logger.log('warn', `closed the Streamable HTTP client from ${client.peer}: no event stream and no request for ${idleMs} ms`),
  );
  return pool;
}

/**
 * Listens for remote clients and hands each client `pool` admits to `onClient` as a byte stream
 * of NDJSON lines, its transport bound (a WebSocket closes 1001 when the client is closed). A
 * client the pool refuses gets 503 (its WebSocket upgrade, or its `initialize` POST).
 *
 * @remarks Closing the listener stops listening, closes `pool` and resolves once every socket is
 * gone. The pool's `maxClients` wins over `options.maxClients`; its idle timeout is not applied.
 * @throws TypeError or RangeError for an invalid option (synchronously)
 * @returns resolves once listening; rejects with the listen error (e.g. EADDRINUSE)
 * @internal
 */
export function serveRemoteClients(
  options: RemoteServerOptions,
  pool: ClientPool,
  onClient: (stream: Duplex, info: RemoteClientInfo, client: PooledClient) => void,
): Promise<RemoteListener> {
  checkServerOptions(options);
  // A client is admitted by its WebSocket upgrade or its `initialize` POST, before its stream exists.
  const admitted = new WeakMap<IncomingMessage, PooledClient>();
  const admitClient = (request: IncomingMessage): PooledClient | undefined => {
    const client = pool.admit(peerOf(request.socket));
    if (client) admitted.set(request, client);
    return client;
  };
  // A socket that resumes a connection is no new client: its slot goes back at once.
  const release = (request: IncomingMessage): void => admitted.get(request)?.leave();
  const onStream = (stream: Duplex, info: RemoteClientInfo): void => {
    const client = admitted.get(info.request)!;
    client.bind(
      stream,
      () => closeStream(stream),
      stream instanceof ResumableServerStream,
      () => markGoingAway(stream),
    );
    // A Streamable HTTP connection that nothing held for `httpIdleTimeoutMs` was abandoned.
    if (info.transport === 'http') stream.once('idle', () => void client.closeIdle());
    onClient(stream, info, client);
  };
  const admitHttp = (request: IncomingMessage): boolean => admitClient(request) !== undefined;
  const http = transportsOf(options).includes('http')
    ? { headers: new HttpStreamServer(options, onStream, admitHttp), path: new HttpPathServer(options, onStream, admitHttp) }
    : undefined;
  const server = remoteHttpServer(options, http, admitClient, { onStream, release }, () => healthOf(pool));
  return listenOn(server, options).then(() => remoteListener(server, options, pool, http));
}

/** @throws TypeError or RangeError naming the first invalid option of a remote server */
function checkServerOptions(options: RemoteServerOptions): void {
  checkMaxCount('maxClients', options.maxClients ?? Number.POSITIVE_INFINITY);
  checkIdleTimeout('httpIdleTimeoutMs', options.httpIdleTimeoutMs ?? DEFAULT_HTTP_IDLE_TIMEOUT_MS);
  checkPort(options.port ?? 0);
  checkPath(options.path ?? DEFAULT_PATH);
  if ((options.path ?? DEFAULT_PATH) === HEALTH_PATH) throw new RangeError(`path must not be ${HEALTH_PATH}: it answers health probes`);
  checkAccessOptions(options);
  checkExposure(options.host ?? DEFAULT_HOST, options);
  checkRemoteOptions(options);
  checkTlsOptions(options.tls);
  resumeSettings(options.resume);
  const transports = options.transports ?? ['websocket', 'http'];
  if (!Array.isArray(transports) || transports.length === 0 || transports.some((t) => t !== 'websocket' && t !== 'http')) {
    throw new TypeError('transports must list "websocket" and/or "http"');
  }
}

/** @throws TypeError naming the first invalid field of `tls` */
function checkTlsOptions(tls: RemoteTlsOptions | undefined): void {
  if (tls === undefined) return;
  if (typeof tls !== 'object' || tls === null) throw new TypeError('tls must be an object with cert and key');
  const isPem = (value: unknown): boolean => typeof value === 'string' || Buffer.isBuffer(value);
  if (!isPem(tls.cert)) throw new TypeError('tls.cert must be a PEM certificate (a string or a Buffer)');
  if (!isPem(tls.key)) throw new TypeError('tls.key must be a PEM private key (a string or a Buffer)');
  if (tls.passphrase !== undefined && typeof tls.passphrase !== 'string') throw new TypeError('tls.passphrase must be a string');
}

function transportsOf(options: RemoteServerOptions): readonly RemoteTransport[] {
  return options.transports ?? ['websocket', 'http'];
}

/**
 * The Streamable HTTP sides of a server, one per dialect: `headers` answers `PATH` (the connection
 * named by `Acp-Connection-Id`, as the SDK), `path` answers `PATH/<id>` (as acp-http-client).
 */
interface HttpSides {
  readonly headers: HttpStreamServer;
  readonly path: HttpPathServer;
}

/** The HTTP server: Streamable HTTP requests to `http`, WebSocket upgrades to a `ws` server; both behind the access checks. */
function remoteHttpServer(
  options: RemoteServerOptions,
  http: HttpSides | undefined,
  admitClient: (request: IncomingMessage) => PooledClient | undefined,
  sink: WebSocketSink,
  health: () => RemoteHealth,
): Server {
  const path = options.path ?? DEFAULT_PATH;
  const wss = transportsOf(options).includes('websocket') ? webSocketServer(options, sink) : undefined;
  // Node validates the certificate and key here: a bad pair throws before anything listens.
  const server = options.tls
    ? createTlsServer({ cert: options.tls.cert, key: options.tls.key, passphrase: options.tls.passphrase })
    : createServer();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    // Before the access checks: a balancer probes without a token or an origin.
    if (pathOf(request.url) === HEALTH_PATH) return answerHealth(request, response, health());
    // A connection id in the path is the second dialect's: telling them apart needs nothing else.
    const connectionId = http ? connectionIdInPath(pathOf(request.url), path) : undefined;
    if (!admit(request, response, options, connectionId === undefined ? path : pathOf(request.url))) return;
    if (connectionId !== undefined) return http!.path.handle(request, response, connectionId);
    if (http) return http.headers.handle(request, response);
    refuse(response, 426, 'Upgrade Required: this server speaks WebSocket only');
  });
  server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (pathOf(request.url) !== path) return refuseUpgrade(socket, 404, 'Not Found');
    const refusal = checkAccess(request.headers, options);
    if (refusal) return refuseUpgrade(socket, refusal.status, refusal.reason);
    if (!wss) return refuseUpgrade(socket, 404, 'This server speaks Streamable HTTP only');
    // A socket that resumes a connection this server holds takes no new slot: the connection keeps
    // its own, also while the server is full or draining (its client may be finishing a turn).
    if (wss.isResuming(request)) return wss.accept(request, socket, head, true);
    const client = admitClient(request);
    if (!client) {
      const text = health() === 'draining' ? 'Draining: not taking new clients' : 'Too many clients';
      return refuseUpgrade(socket, 503, text, `Retry-After: ${RETRY_AFTER_SECONDS}\r\n`);
    }
    // Until the upgrade completes, the socket is the client's transport: a failed handshake frees the slot.
    client.bind(socket, () => void socket.destroy());
    wss.accept(request, socket, head);
  });
  return server;
}

/** Listens on the options' port and host. */
function listenOn(server: Server, options: RemoteServerOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? DEFAULT_HOST, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

/** The listener of a listening server: its URLs, its clients, and its close. */
function remoteListener(server: Server, options: RemoteServerOptions, pool: ClientPool, http: HttpSides | undefined): RemoteListener {
  const host = options.host ?? DEFAULT_HOST;
  const path = options.path ?? DEFAULT_PATH;
  const port = (server.address() as AddressInfo).port;
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const close = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    http?.headers.close();
    http?.path.close();
    // Each client's connection first (its queued answers are flushed), then its stream.
    await pool.close();
    server.closeAllConnections();
    await closed;
  };
  return {
    host,
    port,
    url: `${options.tls ? 'wss' : 'ws'}://${authority}${path}`,
    httpUrl: `${options.tls ? 'https' : 'http'}://${authority}${path}`,
    server,
    pool,
    get clientCount() {
      return pool.size;
    },
    get health() {
      return healthOf(pool);
    },
    drain: (drainOptions = {}) => pool.drain({ timeoutMs: drainOptions.timeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** What the health path answers for `pool`. */
function healthOf(pool: ClientPool): RemoteHealth {
  if (pool.isDraining || pool.isClosing) return 'draining';
  return pool.size >= pool.maxClients ? 'full' : 'ready';
}

/** Answers a health probe: 200 `ready`, or 503 `full`/`draining`; nothing else is told. */
function answerHealth(request: IncomingMessage, response: ServerResponse, health: RemoteHealth): void {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('Allow', 'GET, HEAD');
    return refuse(response, 405, 'Method Not Allowed');
  }
  response.writeHead(health === 'ready' ? 200 : 503, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(health),
    'Cache-Control': 'no-store',
  });
  response.end(request.method === 'HEAD' ? undefined : health);
}

/** Answers 404/401/403 (and CORS preflights) itself; returns whether the request may go on. */
function admit(request: IncomingMessage, response: ServerResponse, options: AccessOptions, path: string): boolean {
  if (pathOf(request.url) !== path) return (void refuse(response, 404, 'Not Found'), false);
  const refusal = checkAccess(request.headers, options);
  if (refusal) return (void refuse(response, refusal.status, refusal.reason), false);
  const origin = request.headers.origin;
  if (origin !== undefined) {
    // Only an allowed origin gets here: let its page read the answers and our headers.
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Vary', 'Origin');
    response.setHeader('Access-Control-Expose-Headers', `${HEADER_CONNECTION_ID}, Acp-Session-Id`);
  }
  if (request.method === 'OPTIONS') {
    response.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE');
    response.setHeader('Access-Control-Allow-Headers', `Content-Type, Authorization, Accept, ${HEADER_CONNECTION_ID}, Acp-Session-Id`);
    response.writeHead(204).end();
    return false;
  }
  return true;
}

/** Ends a response with a status and a short text body. */
export function refuse(response: ServerResponse, status: number, text: string): void {
  if (response.headersSent) return void response.destroy();
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

/** Answers a WebSocket upgrade with an HTTP refusal; `extraHeaders` are whole `Name: value\r\n` lines. */
function refuseUpgrade(socket: Socket, status: number, text: string, extraHeaders = ''): void {
  const statusText: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 503: 'Service Unavailable' };
  socket.on('error', () => {});
  socket.end(
    `HTTP/1.1 ${status} ${statusText[status] ?? 'Error'}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `${extraHeaders}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
}

/** Makes a WebSocket client's stream close 1001 (going away) when its connection ends it, as {@link closeStream} does. */
function markGoingAway(stream: Duplex): void {
  if ('markGoingAway' in stream && typeof stream.markGoingAway === 'function') stream.markGoingAway();
}

/** Ends a client's stream (a WebSocket gets a 1001 close) and resolves once it is gone, cutting it after a grace period. */
function closeStream(stream: Duplex): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => stream.destroy(), CLOSE_GRACE_MS);
    stream.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    if ('closeGoingAway' in stream && typeof stream.closeGoingAway === 'function') stream.closeGoingAway();
    else stream.end();
  });
}
