/**
 * The MCP sessions of the bridge's endpoint: one per `initialize` from an MCP client, named by the
 * `Mcp-Session-Id` header, holding what the client said in its handshake, its log level, its active
 * requests and the answers the bridge awaits from it.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import type { JsonObject, JsonValue, RequestId } from '../jsonrpc/message';

/** One MCP session: a client's handshake, its log level, and its requests in flight by MCP id. */
export interface McpSession {
  /** The `Mcp-Session-Id`. */
  readonly id: string;
  /** The route (the bridged server) the session was opened on. */
  readonly route: string;
  /** The MCP revision the handshake settled on. */
  readonly protocolVersion: string;
  /** The client's `capabilities` from its `initialize`. */
  readonly clientCapabilities: JsonObject;
  /** The client's `clientInfo` from its `initialize`, if it sent one. */
  readonly clientInfo: JsonValue | undefined;
  /** The capabilities the session's `initialize` answer advertised. */
  readonly capabilities: JsonObject;
  /** The level `logging/setLevel` set, stamped on each forwarded request; none before it. */
  logLevel: string | undefined;
  /** Aborts each request in flight, by the key {@link requestKey} of its MCP id. */
  readonly active: Map<string, AbortController>;
  /** Takes the client's answer to each request the bridge sent it (an input request), by its key. */
  readonly awaitedAnswers: Map<string, (answer: JsonObject) => void>;
}

/** What opens a session: the client's side of the handshake and the capabilities answered. */
export type McpSessionHandshake = Pick<McpSession, 'protocolVersion' | 'clientCapabilities' | 'clientInfo' | 'capabilities'>;

/** The key of an MCP request id in {@link McpSession.active} (ids compare by JSON value and type). */
export function requestKey(id: RequestId): string {
  return JSON.stringify(id);
}

/** The sessions of one endpoint. */
export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();

  /** Opens a session with a fresh random id. */
  open(route: string, handshake: McpSessionHandshake): McpSession {
    const session: McpSession = {
      id: randomUUID(),
      route,
      ...handshake,
      logLevel: undefined,
      active: new Map(),
      awaitedAnswers: new Map(),
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The open session with this id on this route; `undefined` for an unknown, ended or foreign one. */
  get(id: string, route: string): McpSession | undefined {
    const session = this.#sessions.get(id);
    return session?.route === route ? session : undefined;
  }

  /** Ends a session and cancels its requests in flight; whether it was open. */
  end(session: McpSession): boolean {
    if (!this.#sessions.delete(session.id)) return false;
    for (const controller of session.active.values()) controller.abort();
    return true;
  }

  /** Ends every session of a route. */
  endRoute(route: string): void {
    for (const session of [...this.#sessions.values()]) if (session.route === route) this.end(session);
  }

  /** Ends every session. */
  endAll(): void {
    for (const session of [...this.#sessions.values()]) this.end(session);
  }
}
