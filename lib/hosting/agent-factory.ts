/**
 * What an agent hosted in the server's own process is made by, and what it is told: the
 * {@link AgentFactory} a module given to `acp-wire serve --agent-module` exports.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import type { RemoteTransport } from '../transports/remote/remote-connection';

/** Who one hosted agent instance serves: what an {@link AgentFactory} receives beside its connection. */
export interface AgentFactoryInfo {
  /** The client connection's id (its `Acp-Connection-Id`): unique on the server, for logs. */
  readonly connectionId: string;
  /** The transport the client came over. */
  readonly transport: RemoteTransport;
  /**
   * Aborts once the client connection has closed, however it closed: stop what this instance
   * started (timers, child processes, sockets) when it does.
   */
  readonly signal: AbortSignal;
}

/**
 * What an {@link AgentFactory} returns: typically an `AcpAgent`; anything else, or nothing, is
 * accepted. When it has a `[Symbol.asyncDispose]()` or `[Symbol.dispose]()` method, the host calls
 * it once the instance's connection has closed and waits for it.
 */
export type HostedAgent = object | undefined | void;

/**
 * Makes the agent instance that serves one client connection, in the server's own process: what a
 * module given to `acp-wire serve --agent-module` exports as `createAgent` (or as its default export).
 *
 * @remarks
 * - Called once per accepted client (WebSocket or Streamable HTTP), with a fresh {@link Connection}
 *   of that client's own: register the agent's handlers on it (e.g. `new AcpAgent(connection, …)`).
 *   Nothing the client sent is dispatched before the factory returns (or its promise resolves),
 *   so an async factory misses nothing.
 * - Keep per-client state in the instance, not in module variables: every client of the server
 *   shares the module. Import the acp-wire that runs the server: a `Connection` of another copy
 *   makes `new AcpAgent(connection, …)` throw a `TypeError`.
 * - When the client leaves, its connection closes (its handlers' signals abort, its pending
 *   requests reject), `info.signal` aborts, then the returned value's `[Symbol.asyncDispose]()` or
 *   `[Symbol.dispose]()` runs.
 * - A factory that throws (or rejects) fails this client only: each request it sent, or sends in
 *   the next two seconds, is answered `-32603` with `data: { reason: 'agent_failed_to_start' }`,
 *   then its connection is closed; the error is reported on the server's side.
 * - Everything the instance runs (the factory, its handlers, what they schedule) carries its async
 *   context: `serve` closes the client of an instance that throws outside its handlers (a timer
 *   callback, a promise nobody awaits), and only that one.
 * @example
 * ```ts
 * import { AcpAgent } from 'acp-wire';
 * import type { AgentFactory } from 'acp-wire/server';
 *
 * export const createAgent: AgentFactory = (connection) =>
 *   new AcpAgent(connection, { info: { name: 'echo', version: '1.0.0' }, prompt: (turn) => turn.sendText('hi') });
 * ```
 */
export type AgentFactory = (connection: Connection, info: AgentFactoryInfo) => HostedAgent | Promise<HostedAgent>;

/** What went wrong with one hosted instance: its factory failed, it threw outside its handlers, or its dispose failed or took too long. */
export interface HostedAgentFailure {
  /** The client connection's id. */
  readonly connectionId: string;
  /**
   * `'start'`: the factory threw or rejected; `'run'`: the instance threw outside its handlers
   * (see `AgentHost.failCurrent`); `'dispose'`: its dispose threw, rejected or overran
   * `disposeTimeoutMs`.
   */
  readonly stage: 'start' | 'run' | 'dispose';
  /** What was thrown (an `Error` naming the timeout for an overrun dispose). */
  readonly error: unknown;
}
