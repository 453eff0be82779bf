/**
 * Agents hosted in the server's own process: one instance per client connection, made by an
 * {@link AgentFactory} (what `acp-wire serve --agent-module` loads), disposed with its connection.
 *
 * @packageDocumentation
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Duplex } from 'node:stream';
import type { Connection, ConnectionOptions } from '../connection/connection';
import { connectionWorkProbe, type WorkProbe } from '../server/work-probe';
import type { RemoteTransport } from '../transports/remote/remote-connection';
import { HostedInstance, type InstanceHost } from './hosted-instance';

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
 * import { AcpAgent, type AgentFactory } from 'acp-wire';
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
   * (see {@link AgentHost.failCurrent}); `'dispose'`: its dispose threw, rejected or overran
   * `disposeTimeoutMs`.
   */
  readonly stage: 'start' | 'run' | 'dispose';
  /** What was thrown (an `Error` naming the timeout for an overrun dispose). */
  readonly error: unknown;
}

/** Options of an {@link AgentHost}. @internal */
export interface AgentHostOptions {
  /** Makes each client's instance. */
  readonly factory: AgentFactory;
  /** Options of each client's {@link Connection} (its logger, name, longest line). */
  readonly connection?: ConnectionOptions;
  /** How long an instance's dispose may take before the host gives up waiting for it, in ms. */
  readonly disposeTimeoutMs: number;
  /** Told each failure of one instance; the other instances, and the host, go on. */
  readonly onFailure: (failure: HostedAgentFailure) => void;
}

/**
 * Hosts one agent instance per client byte stream (NDJSON lines), made by an {@link AgentFactory}
 * over a {@link Connection} of that client's own, in this process.
 *
 * @remarks Hand each stream of a remote server to {@link AgentHost.host}; its returned probe
 * tells the server's drain the connection's requests in flight, either way. The instance is
 * disposed once the stream or the connection closes. A failing instance fails its own client only.
 * @internal
 */
export class AgentHost {
  readonly #instances = new Set<HostedInstance>();
  readonly #side: InstanceHost;
  #whenEmpty: (() => void)[] = [];

  constructor(options: AgentHostOptions) {
    this.#side = {
      factory: options.factory,
      connectionOptions: options.connection,
      disposeTimeoutMs: options.disposeTimeoutMs,
      context: new AsyncLocalStorage<HostedInstance>(),
      onFailure: options.onFailure,
      ended: (instance) => this.#ended(instance),
    };
  }

  /** How many instances are running or being disposed now. */
  get size(): number {
    return this.#instances.size;
  }

  /**
   * Makes an instance for the client of `stream`; returns the probe of its connection's work in
   * flight. Closing the stream closes the connection and disposes the instance.
   */
  host(stream: Duplex, client: { readonly connectionId: string; readonly transport: RemoteTransport }): WorkProbe {
    const instance = new HostedInstance(this.#side, stream, client);
    this.#instances.add(instance);
    return connectionWorkProbe(instance.connection);
  }

  /**
   * Fails the instance the code running now belongs to, if any: reports `error` (stage `'run'`)
   * and closes its connection (which disposes it). For what an instance threw outside its handlers
   * (a timer callback, an event listener, a promise nobody awaited), caught by the process's
   * `'uncaughtException'` and `'unhandledRejection'` listeners, which run in the context of the
   * code that threw.
   *
   * @returns whether the code running now belongs to one of this host's instances
   */
  failCurrent(error: unknown): boolean {
    const instance = this.#side.context.getStore();
    if (!instance) return false;
    instance.fail(error);
    return true;
  }

  /** Resolves once every instance hosted so far has been disposed (their connections closed first). */
  whenAllEnded(): Promise<void> {
    if (this.#instances.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#whenEmpty.push(resolve));
  }

  #ended(instance: HostedInstance): void {
    this.#instances.delete(instance);
    if (this.#instances.size > 0) return;
    const waiting = this.#whenEmpty;
    this.#whenEmpty = [];
    for (const resolve of waiting) resolve();
  }
}
