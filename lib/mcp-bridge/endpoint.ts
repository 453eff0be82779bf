/**
 * The bridge's loopback MCP endpoint: Streamable HTTP on `127.0.0.1`, one route per bridged server,
 * each with its own secret; requests checked (Host, Origin, secret) before their body is read.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isBearerValid } from '../transports/remote/limits';
import { isAllowedOrigin, isLoopbackHostHeader, newSecret } from './http-guard';
import type { BridgedServer, McpHttpEndpointOptions, ServedRoute } from './bridged-server';
import { McpPost } from './post';
import { sendHttpError } from './reply';
import { McpSessions } from './sessions';
import { MCP_PROTOCOL_VERSION_HEADER, MCP_SESSION_ID_HEADER, unsupportedRevisionReason } from './legacy-mcp';

const ROUTE_PREFIX = '/mcp/';

/** A loopback MCP endpoint. @internal */
export class McpHttpEndpoint {
  readonly #server: Server;
  readonly #options: McpHttpEndpointOptions;
  readonly #byRoute = new Map<string, ServedRoute>();
  readonly #sessions = new McpSessions();
  readonly #port: number;
  #closed: Promise<void> | undefined;

  private constructor(server: Server, options: McpHttpEndpointOptions) {
    this.#server = server;
    this.#options = options;
    this.#port = (server.address() as AddressInfo).port;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.#handle(req, res).catch((error: unknown) => {
        options.logger.log('error', `MCP bridge endpoint failed on a request: ${String(error)}`);
        sendHttpError(res, 500, null, -32603, 'MCP bridge failure');
      });
    });
  }

  /** Listens on `127.0.0.1`, on a free port. */
  static async listen(options: McpHttpEndpointOptions): Promise<McpHttpEndpoint> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => options.logger.log('error', `MCP bridge endpoint: ${error.message}`));
    return new McpHttpEndpoint(server, options);
  }

  /** The port it listens on. */
  get port(): number {
    return this.#port;
  }

  /** A new route for a declared server: a fresh random path and secret, on every call. */
  serve(serverId: string, name: string): BridgedServer {
    const route = randomUUID();
    const server: BridgedServer = {
      serverId,
      name,
      route,
      secret: newSecret(),
      url: `http://127.0.0.1:${this.#port}${ROUTE_PREFIX}${route}`,
    };
    this.#byRoute.set(route, { server, inFlight: new Set() });
    return server;
  }

  /** Stops serving a route: its MCP sessions end and its requests in flight are cancelled. */
  unserve(server: BridgedServer): void {
    if (!this.#byRoute.delete(server.route)) return;
    this.#sessions.endRoute(server.route);
    this.cancelRequests(server);
  }

  /**
   * Cancels the MCP requests in flight on a route, as if their clients had cancelled them: each
   * `mcp/message` gets its `$/cancel_request`, each client a `-32800` answer. The route and its
   * MCP sessions stay. Answers how many were cancelled.
   */
  cancelRequests(server: BridgedServer): number {
    const inFlight = this.#byRoute.get(server.route)?.inFlight;
    if (!inFlight) return 0;
    const controllers = [...inFlight];
    for (const controller of controllers) controller.abort();
    return controllers.length;
  }

  /** Stops listening, ends every session (cancelling its requests) and drops every connection. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#sessions.endAll();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = this.#admit(req, res);
    if (!route) return;
    if (req.method === 'POST') return new McpPost(req, res, route, this.#sessions, this.#options).run();
    req.resume();
    if (req.method === 'DELETE') return this.#endSession(req, res, route.server);
    sendHttpError(res, 405, null, -32600, 'Method not allowed: this endpoint takes POST (and DELETE to end a session)', {
      allow: 'POST, DELETE',
    });
  }

  /** The route a request is for, once Host, Origin, route and secret are right; else answered. */
  #admit(req: IncomingMessage, res: ServerResponse): ServedRoute | undefined {
    const refuse = (status: number, message: string, headers = {}): undefined => {
      req.resume();
      sendHttpError(res, status, null, -32600, message, headers);
      return undefined;
    };
    if (!isLoopbackHostHeader(req.headers.host, this.#port))
      return refuse(403, 'Forbidden: the Host header must name this loopback endpoint');
    if (!isAllowedOrigin(req.headers.origin)) return refuse(403, 'Forbidden: requests from this Origin are refused');
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const route = path.startsWith(ROUTE_PREFIX) ? this.#byRoute.get(path.slice(ROUTE_PREFIX.length)) : undefined;
    if (!route) return refuse(404, 'Not found: no MCP server at this path');
    if (!isBearerValid(req.headers.authorization, route.server.secret)) {
      return refuse(401, 'Unauthorized: this MCP server needs the bearer token of its declaration', { 'www-authenticate': 'Bearer' });
    }
    return route;
  }

  #endSession(req: IncomingMessage, res: ServerResponse, server: BridgedServer): void {
    const version = req.headers[MCP_PROTOCOL_VERSION_HEADER];
    const unsupported = unsupportedRevisionReason(typeof version === 'string' ? version : undefined);
    if (unsupported) return sendHttpError(res, 400, null, -32600, unsupported);
    const id = req.headers[MCP_SESSION_ID_HEADER];
    const session = typeof id === 'string' ? this.#sessions.get(id, server.route) : undefined;
    if (!session) return sendHttpError(res, 404, null, -32001, 'Session not found');
    this.#sessions.end(session);
    res.writeHead(204).end();
  }
}
