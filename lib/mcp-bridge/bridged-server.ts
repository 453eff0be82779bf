/**
 * What the bridge's loopback MCP endpoint serves: each bridged server under its own route and
 * secret, the requests each route forwards, and the endpoint's options.
 *
 * @packageDocumentation
 */
import type { McpCaller } from '../mcp/caller';
import type { Logger } from '../support/logger';

/** One server the endpoint serves: a declared `acp` server, under its own route and secret. */
export interface BridgedServer {
  /** The declared `serverId`. */
  readonly serverId: string;
  /** The declared name. */
  readonly name: string;
  /** The route's random path segment. */
  readonly route: string;
  /** The secret a client sends as `Authorization: Bearer <secret>`. */
  readonly secret: string;
  /** The route's URL on the loopback listener. */
  readonly url: string;
}

/** Options of `McpHttpEndpoint.listen`. */
export interface McpHttpEndpointOptions {
  /** Sends the `mcp/message` requests toward the providers. */
  caller: McpCaller;
  /** The largest request body read, in bytes; a larger one is answered 413. */
  maxBodyBytes: number;
  /** Where failures of the endpoint itself are logged. */
  logger: Logger;
}

/** A route the endpoint serves: its server, and the MCP requests it is forwarding. @internal */
export interface ServedRoute {
  readonly server: BridgedServer;
  /** Aborts each MCP request of the route in flight (sessions' and stateless ones alike). */
  readonly inFlight: Set<AbortController>;
}
