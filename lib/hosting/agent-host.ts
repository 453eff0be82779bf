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
import type { AgentFactory, HostedAgentFailure } from './agent-factory';
import { HostedInstance, type InstanceHost } from './hosted-instance';

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
