/**
 * Which of the bridge's routes belong to which ACP session: each session gets its own route per
 * declared server, so that a `session/cancel` reaches that session's MCP requests and no other's.
 *
 * @packageDocumentation
 */
import type { BridgedServer } from './bridged-server';

/** The `session/close` request: the agent stops the session's work (as on `session/cancel`) and frees it. */
export const SESSION_CLOSE_METHOD = 'session/close';

/** The `sessionId` of an ACP message's params or result, when it is a non-empty string. */
export function sessionIdOf(value: unknown): string | undefined {
  const id = (value as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The routes of each ACP session, by declared `serverId`. @internal */
export class AcpSessionRoutes {
  readonly #bySession = new Map<string, Map<string, BridgedServer>>();

  /** The route given to `serverId` in session `sessionId`, if any. */
  get(sessionId: string, serverId: string): BridgedServer | undefined {
    return this.#bySession.get(sessionId)?.get(serverId);
  }

  /** Makes `servers` the routes of session `sessionId` (each replacing the route of its `serverId`). */
  bind(sessionId: string, servers: readonly BridgedServer[]): void {
    let routes = this.#bySession.get(sessionId);
    if (!routes) this.#bySession.set(sessionId, (routes = new Map()));
    for (const server of servers) routes.set(server.serverId, server);
  }

  /** The routes of session `sessionId` (none for a session the bridge gave no server). */
  of(sessionId: string): BridgedServer[] {
    return [...(this.#bySession.get(sessionId)?.values() ?? [])];
  }

  /** Forgets session `sessionId`; answers the routes it had. */
  forget(sessionId: string): BridgedServer[] {
    const routes = this.of(sessionId);
    this.#bySession.delete(sessionId);
    return routes;
  }
}
