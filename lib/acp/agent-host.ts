/**
 * Agents hosted in the server's own process: one instance per client connection, made by an
 * {@link AgentFactory} (what `acp-wire serve --agent-module` loads), disposed with its connection.
 *
 * @packageDocumentation
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Duplex } from 'node:stream';
import { PassThrough } from 'node:stream';
import { Connection, setRequestGate, type ConnectionOptions } from '../connection/connection';
import { RpcError } from '../jsonrpc/errors';
import { connectionWorkProbe, type WorkProbe } from '../server/work-probe';
import type { RemoteTransport } from '../transports/remote/remote-server';

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

/** The `data.reason` of the error a client gets when its instance could not be made. */
export const AGENT_FAILED_REASON = 'agent_failed_to_start';

/** How long a connection whose factory failed stays open to answer its requests with the error. */
const FAILED_CONNECTION_GRACE_MS = 2000;

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
  readonly #options: AgentHostOptions;
  readonly #running = new Set<Promise<void>>();
  readonly #context = new AsyncLocalStorage<InstanceScope>();

  constructor(options: AgentHostOptions) {
    this.#options = options;
  }

  /** How many instances are running or being disposed now. */
  get size(): number {
    return this.#running.size;
  }

  /**
   * Makes an instance for the client of `stream`; returns the probe of its connection's work in
   * flight. Closing the stream closes the connection and disposes the instance.
   */
  host(stream: Duplex, client: { readonly connectionId: string; readonly transport: RemoteTransport }): WorkProbe {
    // Nothing is read from the client until the factory has registered its handlers.
    const input = new PassThrough();
    const connection = new Connection(input, stream, this.#options.connection);
    const scope = this.#scopeOf(connection, client.connectionId);
    const aborter = new AbortController();
    const closed = new Promise<void>((resolve) => connection.once('close', () => resolve()));
    stream.once('close', () => scope.run(() => void connection.close()));
    void closed.then(() =>
      scope.run(() => {
        aborter.abort();
        void connection.close().then(() => stream.destroy());
      }),
    );
    const info: AgentFactoryInfo = { connectionId: client.connectionId, transport: client.transport, signal: aborter.signal };
    const instance = scope.run(() => this.#start(connection, info)).finally(() => feed(stream, input, scope));
    const running: Promise<void> = instance
      .then(async (made) => {
        await closed;
        if (made.isMade) await scope.run(() => this.#dispose(made.agent, info.connectionId));
      })
      .finally(() => this.#running.delete(running));
    this.#running.add(running);
    return connectionWorkProbe(connection);
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
    const scope = this.#context.getStore();
    if (!scope) return false;
    scope.fail(error);
    return true;
  }

  /** One instance's async context: everything it runs (its factory, its handlers, what they schedule) carries it. */
  #scopeOf(connection: Connection, connectionId: string): InstanceScope {
    let hasFailed = false;
    const scope: InstanceScope = {
      run: (fn) => this.#context.run(scope, fn),
      fail: (error) => {
        if (hasFailed) return;
        hasFailed = true;
        this.#options.onFailure({ connectionId, stage: 'run', error });
        void connection.close();
      },
    };
    return scope;
  }

  /** Resolves once every instance hosted so far has been disposed (their connections closed first). */
  async whenAllEnded(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  /** Runs the factory; a failure is reported and turns the connection into one that answers the error. */
  async #start(connection: Connection, info: AgentFactoryInfo): Promise<{ isMade: true; agent: HostedAgent } | { isMade: false }> {
    try {
      return { isMade: true, agent: await this.#options.factory(connection, info) };
    } catch (error) {
      this.#options.onFailure({ connectionId: info.connectionId, stage: 'start', error });
      refuseAll(connection);
      return { isMade: false };
    }
  }

  /** Calls the instance's dispose, if it has one, waiting for it up to `disposeTimeoutMs`. */
  async #dispose(agent: HostedAgent, connectionId: string): Promise<void> {
    const dispose = disposerOf(agent);
    if (!dispose) return;
    const timeoutMs = this.#options.disposeTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`its dispose did not finish within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(dispose), overrun]);
    } catch (error) {
      this.#options.onFailure({ connectionId, stage: 'dispose', error });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The async context of one hosted instance. */
interface InstanceScope {
  /** Runs `fn` in the instance's context. */
  run<T>(fn: () => T): T;
  /** Reports `error` as the instance's failure and closes its connection, once. */
  fail(error: unknown): void;
}

/**
 * Passes what the client sends to the connection's input, each chunk in the instance's context
 * (so its handlers, and what they schedule, carry it), with the stream's backpressure.
 */
function feed(stream: Duplex, input: PassThrough, scope: InstanceScope): void {
  stream.on('data', (chunk: Buffer | string) => {
    if (scope.run(() => input.write(chunk))) return;
    stream.pause();
    input.once('drain', () => stream.resume());
  });
  stream.once('end', () => scope.run(() => input.end()));
}

/** The dispose method of a hosted agent, bound to it, if it has one. */
function disposerOf(agent: HostedAgent): (() => unknown) | undefined {
  if (typeof agent !== 'object' || agent === null) return undefined;
  const asyncDispose = (agent as Partial<AsyncDisposable>)[Symbol.asyncDispose];
  if (typeof asyncDispose === 'function') return () => asyncDispose.call(agent);
  const dispose = (agent as Partial<Disposable>)[Symbol.dispose];
  return typeof dispose === 'function' ? () => dispose.call(agent) : undefined;
}

/**
 * Answers every request of `connection` with the start failure (whatever handlers a failed factory
 * registered), closing it after the first one, or after a short grace when none comes.
 */
function refuseAll(connection: Connection): void {
  const refusal = RpcError.internalError({ reason: AGENT_FAILED_REASON }).toJSON();
  const close = (): void => void connection.close();
  const timer = setTimeout(close, FAILED_CONNECTION_GRACE_MS);
  connection.once('close', () => clearTimeout(timer));
  setRequestGate(connection, () => {
    setImmediate(close);
    return { refuse: refusal };
  });
}
