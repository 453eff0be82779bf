/**
 * Starting one proxy chain for one admitted client of a server, whatever its transport: the
 * components named by a URL are connected first, then the client's connection is made and its
 * {@link Conductor} started.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { describeThrown } from '../jsonrpc/errors';
import type { ClientPool, PooledClient } from '../server/client-pool';
import type { Logger } from '../support/logger';
import type { ConnectUrlOptions } from '../transports/url';
import type { ComponentSource } from './chain-component';
import { Conductor, type ConductorOptions } from './conductor';
import { closeUrlComponents, connectUrlComponents, hasUrlComponent } from './url-components';

/** One admitted client, as its transport hands it over to have a chain. @internal */
export interface ChainClient {
  /** Its slot in the pool. */
  readonly client: PooledClient;
  /** Makes the client's connection; what the client sent so far waits in its transport until then. */
  open(): Connection;
  /** Called once the chain is made (or failed): lets the transport hand the client's first bytes over. */
  ready?(): void;
  /** Ends a client whose chain could not start. */
  drop(): void;
}

/** What {@link ChainStarter} needs. @internal */
export interface ChainStarterOptions {
  /** Every chain's options, but its client. */
  chain: Omit<ConductorOptions, 'client'>;
  /** How components named by a URL are connected. */
  urlOptions: ConnectUrlOptions | undefined;
  /** Called with each chain once it has started. */
  onChain: ((conductor: Conductor) => void) | undefined;
  /** Makes each chain's extra component, placed just before the agent. */
  beforeAgent?: (() => ComponentSource) | undefined;
  /** Called when a chain could not be started; without it, an `error` line goes to `logger`. */
  onChainFailed: ((error: unknown) => void) | undefined;
  /** The server's logger. */
  logger: Logger;
}

/**
 * Starts a chain per client of `pool`; closing the pool aborts the URL connections under way,
 * and closes the chains.
 *
 * @internal
 */
export class ChainStarter {
  /** The chains running now. */
  readonly chains = new Set<Conductor>();
  readonly #pool: ClientPool;
  readonly #options: ChainStarterOptions;

  constructor(pool: ClientPool, options: ChainStarterOptions) {
    this.#pool = pool;
    this.#options = options;
  }

  /** Starts the chain of `client`: at once, or once its URL components are connected. */
  start(client: ChainClient): void {
    const components = this.#options.chain.components;
    if (!hasUrlComponent(components)) return this.#startChain(client, components);
    this.#pool.track(this.#connectThenStart(client));
  }

  /** Connects the URL components first; the client's bytes wait in its transport meanwhile. */
  async #connectThenStart(client: ChainClient): Promise<void> {
    const { urlOptions, chain } = this.#options;
    const signal = urlOptions?.signal ? AbortSignal.any([urlOptions.signal, this.#pool.signal]) : this.#pool.signal;
    let components: ComponentSource[];
    try {
      components = await connectUrlComponents(chain.components, { urlOptions: { ...urlOptions, signal }, logger: chain.logger });
    } catch (error) {
      // Stopped while connecting (the pool closing, or the caller's signal): not a failure of the chain.
      if (!signal.aborted) this.#failed(client, error);
      client.drop();
      return;
    }
    if (this.#pool.isClosing || client.client.hasLeft) return closeUrlComponents(components);
    this.#startChain(client, components);
  }

  #startChain(client: ChainClient, components: readonly ComponentSource[]): void {
    const connection = client.open();
    client.client.attach(connection);
    let conductor: Conductor;
    let extra: ComponentSource | undefined;
    try {
      extra = this.#options.beforeAgent?.();
      const all = extra === undefined ? components : [...components.slice(0, -1), extra, ...components.slice(-1)];
      conductor = new Conductor({ ...this.#options.chain, components: all, client: connection });
    } catch (error) {
      this.#failed(client, error);
      void Promise.all([connection.close(), closeUrlComponents(components), closeUrlComponents(extra === undefined ? [] : [extra])]);
      return;
    } finally {
      client.ready?.();
    }
    this.chains.add(conductor);
    void conductor.closed.then(() => this.chains.delete(conductor));
    client.client.attachChain(conductor);
    this.#options.onChain?.(conductor);
  }

  #failed(client: ChainClient, error: unknown): void {
    if (this.#options.onChainFailed) this.#options.onChainFailed(error);
    else this.#options.logger.log('error', `could not start a chain for ${client.client.peer}: ${describeThrown(error)}`);
  }
}
