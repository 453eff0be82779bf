/**
 * One agent instance an `AgentHost` runs for one client: its connection, its async context,
 * its start and its disposal.
 *
 * @packageDocumentation
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import { type Duplex, PassThrough } from 'node:stream';
import { Connection, setRequestGate, type ConnectionOptions } from '../connection/connection';
import { RpcError } from '../jsonrpc/errors';
import type { RemoteTransport } from '../transports/remote/remote-connection';
import type { AgentFactory, AgentFactoryInfo, HostedAgent, HostedAgentFailure } from './agent-factory';

/** The `data.reason` of the error a client gets when its instance could not be made. */
export const AGENT_FAILED_REASON = 'agent_failed_to_start';

/** How long a connection whose factory failed stays open to answer its requests with the error. */
const FAILED_CONNECTION_GRACE_MS = 2000;

/** What a {@link HostedInstance} needs of its host. @internal */
export interface InstanceHost {
  readonly factory: AgentFactory;
  readonly connectionOptions: ConnectionOptions | undefined;
  readonly disposeTimeoutMs: number;
  /** The async context every instance's code runs in. */
  readonly context: AsyncLocalStorage<HostedInstance>;
  onFailure(failure: HostedAgentFailure): void;
  /** The instance has been disposed (its connection closed first). */
  ended(instance: HostedInstance): void;
}

/**
 * One client's agent instance: a {@link Connection} over the client's stream, made into an agent by
 * the factory, disposed once the connection has closed.
 *
 * @remarks What the client sends is read only once the factory has returned (or its promise
 * resolved), each chunk in the instance's async context: its handlers, and what they schedule,
 * carry it (see `AgentHost.failCurrent`). Closing the stream closes the connection; the
 * connection's close aborts `info.signal`, ends the stream, then disposes the instance.
 * @internal
 */
export class HostedInstance {
  /** The client's connection. */
  readonly connection: Connection;
  readonly #host: InstanceHost;
  readonly #stream: Duplex;
  readonly #input = new PassThrough();
  readonly #client: { readonly connectionId: string; readonly transport: RemoteTransport };
  #aborter: AbortController | undefined;
  #agent: HostedAgent;
  #isStarting = true;
  #isClosed = false;
  #hasFailed = false;

  constructor(host: InstanceHost, stream: Duplex, client: { readonly connectionId: string; readonly transport: RemoteTransport }) {
    this.#host = host;
    this.#stream = stream;
    this.#client = client;
    this.connection = new Connection(this.#input, stream, host.connectionOptions);
    this.connection.once('close', () => this.run(() => this.#onClose()));
    stream.once('close', () => this.run(() => void this.connection.close()));
    this.run(() => this.#start());
  }

  /** Runs `fn` in this instance's async context. */
  run<T>(fn: () => T): T {
    return this.#host.context.run(this, fn);
  }

  /** Reports `error` as this instance's failure (stage `'run'`) and closes its connection; once. */
  fail(error: unknown): void {
    if (this.#hasFailed) return;
    this.#hasFailed = true;
    this.#host.onFailure({ connectionId: this.#client.connectionId, stage: 'run', error });
    void this.connection.close();
  }

  #start(): void {
    let made: HostedAgent | Promise<HostedAgent>;
    try {
      made = this.#host.factory(this.connection, this.#info());
    } catch (error) {
      return this.#startFailed(error);
    }
    if (!isThenable(made)) return this.#started(made);
    made.then(
      (agent) => this.#started(agent),
      (error: unknown) => this.#startFailed(error),
    );
  }

  /** The factory's `info`; its `signal` is made on first use (most factories never read it). */
  #info(): AgentFactoryInfo {
    const instance = this;
    const { connectionId, transport } = this.#client;
    return {
      connectionId,
      transport,
      get signal() {
        return instance.#signal();
      },
    };
  }

  #signal(): AbortSignal {
    if (!this.#aborter) {
      this.#aborter = new AbortController();
      if (this.#isClosed) this.#aborter.abort();
    }
    return this.#aborter.signal;
  }

  #started(agent: HostedAgent): void {
    this.#agent = agent;
    this.#afterStart();
  }

  #startFailed(error: unknown): void {
    this.#host.onFailure({ connectionId: this.#client.connectionId, stage: 'start', error });
    refuseAll(this.connection);
    this.#afterStart();
  }

  #afterStart(): void {
    this.#isStarting = false;
    if (this.#isClosed) void this.#end();
    else this.#feed();
  }

  /** Passes what the client sends to the connection, each chunk in this context, with the stream's backpressure. */
  #feed(): void {
    const stream = this.#stream;
    const input = this.#input;
    stream.on('data', (chunk: Buffer | string) => {
      if (this.run(() => input.write(chunk))) return;
      stream.pause();
      input.once('drain', () => stream.resume());
    });
    stream.once('end', () => this.run(() => input.end()));
  }

  #onClose(): void {
    this.#isClosed = true;
    this.#aborter?.abort();
    void this.connection.close().then(() => this.#stream.destroy());
    if (!this.#isStarting) void this.#end();
  }

  /** Disposes the instance (if it has a dispose), then tells the host; never synchronously. */
  async #end(): Promise<void> {
    await this.#dispose();
    this.#host.ended(this);
  }

  /** Calls the instance's dispose, if it has one, waiting for it up to `disposeTimeoutMs`. */
  async #dispose(): Promise<void> {
    const dispose = disposerOf(this.#agent);
    if (!dispose) return;
    const timeoutMs = this.#host.disposeTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`its dispose did not finish within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(dispose), overrun]);
    } catch (error) {
      this.#host.onFailure({ connectionId: this.#client.connectionId, stage: 'dispose', error });
    } finally {
      clearTimeout(timer);
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<HostedAgent> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
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
