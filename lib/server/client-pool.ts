/**
 * The clients of a bounded server: up to N at once, each with its connection or chain, an idle
 * timeout, and one `close()` that ends them all. Transports accept; the pool counts and closes.
 *
 * @packageDocumentation
 */
import type { Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import type { Connection } from '../connection/connection';
import { AcpWireError } from '../jsonrpc/errors';
import { checkIdleTimeout, checkMaxCount, hasWorkInFlight, watchIdle } from './bounds';
import { connectionWorkProbe, type WorkProbe } from './work-probe';

/** What a {@link ClientPool} needs of a client's transport (a socket, a WebSocket or HTTP stream). */
export interface ClientTransport {
  /** Registers `listener` for when the transport has closed. */
  once(event: 'close', listener: () => void): unknown;
  /** Unregisters it (when the client is bound to a later transport). */
  removeListener?(event: 'close', listener: () => void): unknown;
}

/** A chain run for one client: what a {@link ClientPool} closes, and waits for, on `close()`. */
export interface PooledChain {
  /** Shuts the chain down; resolves once it has. */
  close(): Promise<unknown>;
  /** Settles once the chain has ended, however it ended. */
  readonly closed: Promise<unknown>;
}

/** Why a client was refused. */
export type RefusalCode = 'ACP_WIRE_CLIENT_LIMIT' | 'ACP_WIRE_SERVER_DRAINING' | 'ACP_WIRE_SERVER_CLOSED';

/**
 * A client a {@link ClientPool} did not admit: `maxClients` were being served
 * (`ACP_WIRE_CLIENT_LIMIT`), the pool was draining (`ACP_WIRE_SERVER_DRAINING`), or it was closing
 * (`ACP_WIRE_SERVER_CLOSED`).
 *
 * @remarks Not thrown: carried by the pool's `'refused'` event. The transport refuses the client
 * its own way (a TCP socket is destroyed, a WebSocket upgrade or an HTTP `initialize` gets 503).
 */
export class ClientRefusedError extends AcpWireError {
  /** Always `'ClientRefusedError'`. */
  override readonly name = 'ClientRefusedError';
  /**
   * @param code - why the client was refused
   * @param peer - who the client is, e.g. `127.0.0.1:51234`
   * @param open - how many clients were being served
   */
  constructor(
    readonly code: RefusalCode,
    readonly peer: string,
    readonly open: number,
  ) {
    super(REFUSAL_MESSAGES[code](open));
  }
}

const REFUSAL_MESSAGES: Record<RefusalCode, (open: number) => string> = {
  ACP_WIRE_CLIENT_LIMIT: (open) => `client limit reached (${open} open)`,
  ACP_WIRE_SERVER_DRAINING: () => 'the server is draining',
  ACP_WIRE_SERVER_CLOSED: () => 'the server is closing',
};

/** Options of {@link ClientPool.drain}. */
export interface DrainPoolOptions {
  /**
   * How long clients with work in flight may take to finish it, in milliseconds; then they are
   * closed all the same (cut). `0`: at once. An integer from 0 to 2^31 - 1.
   */
  timeoutMs: number;
}

/** What {@link ClientPool.drain} did. */
export interface DrainResult {
  /** How many clients were being served when the drain began. */
  readonly clients: number;
  /** How many of them were closed at the deadline with work still in flight. */
  readonly cut: number;
}

/** Events of a {@link ClientPool}. */
export interface ClientPoolEvents {
  /** A client was admitted; its transport hands it its connection next. */
  accepted: [client: PooledClient];
  /** A client was not admitted. */
  refused: [error: ClientRefusedError];
  /**
   * A client is being closed for being idle: silent for `idleTimeoutMs` with nothing in flight
   * (see {@link PooledClient.watchIdle}), or idle by its transport's own rule (a Streamable HTTP
   * connection that nothing held for `httpIdleTimeoutMs`; see {@link PooledClient.closeIdle}).
   */
  idle: [client: PooledClient];
  /** A draining pool is closing a client at its deadline with work still in flight (see {@link ClientPool.drain}). */
  cut: [client: PooledClient];
  /** A client has left (its transport or its connection closed): its slot is free. */
  closed: [client: PooledClient];
}

/** Options of a {@link ClientPool}. */
export interface ClientPoolOptions {
  /** How many clients are served at once. An integer of at least 1, or `Infinity` (default). */
  maxClients?: number;
  /**
   * Closes a client whose socket has carried no byte either way for this long while its connection
   * has nothing in flight (see {@link PooledClient.watchIdle}). Milliseconds; `0` (default): never.
   */
  idleTimeoutMs?: number;
}

/**
 * One admitted client of a {@link ClientPool}: its slot, then its connection and its chain.
 *
 * @remarks The slot is freed when the client's transport or its connection closes, whichever
 * comes first. A chain attached to it is still closed and waited for by {@link ClientPool.close}
 * after the client has left.
 */
export class PooledClient {
  readonly #pool: ClientPool;
  readonly #release: (client: PooledClient) => void;
  #connection: Connection | undefined;
  #chain: PooledChain | undefined;
  #probe: WorkProbe | undefined;
  #hasLeft = false;
  #left: () => void = ignore;
  readonly #hasLeftPromise = new Promise<void>((resolve) => (this.#left = resolve));

  #endTransport: () => Promise<void> | void = ignore;
  #beforeClose: () => void = ignore;
  /** Forgets the bound transport's close. */
  #unbind: () => void = ignore;

  /** @internal */
  constructor(
    pool: ClientPool,
    /** Who the client is, e.g. `127.0.0.1:51234`, for logs. */
    readonly peer: string,
    release: (client: PooledClient) => void,
  ) {
    this.#pool = pool;
    this.#release = release;
  }

  /**
   * Binds the client's transport: its close frees the slot, and {@link PooledClient.close} ends
   * it with `end` (e.g. destroys a socket). Binding again (a WebSocket's stream once its upgrade
   * socket was bound) makes `end` the later transport's. With `outlivesEarlier` (a resumable
   * connection, which outlives its first socket), the earlier transports' close no longer frees
   * the slot. `beforeClose` runs when {@link PooledClient.close} begins, before the connection
   * is closed (e.g. so that a WebSocket's end says 1001, going away, rather than 1000).
   */
  bind(transport: ClientTransport, end: () => Promise<void> | void, outlivesEarlier = false, beforeClose: () => void = ignore): void {
    if (outlivesEarlier) this.#unbind();
    this.#endTransport = end;
    this.#beforeClose = beforeClose;
    const onClose = (): void => this.leave();
    transport.once('close', onClose);
    const unbindEarlier = this.#unbind;
    this.#unbind = () => {
      unbindEarlier();
      transport.removeListener?.('close', onClose);
    };
  }

  /** The client's connection, once attached. */
  get connection(): Connection | undefined {
    return this.#connection;
  }

  /** The client's chain, once attached. */
  get chain(): PooledChain | undefined {
    return this.#chain;
  }

  /** Whether the client has left (its slot is free). */
  get hasLeft(): boolean {
    return this.#hasLeft;
  }

  /** Makes `connection` the client's: its close frees the slot, its requests in flight keep the client from being idle. */
  attach(connection: Connection): void {
    this.#connection = connection;
    this.#probe ??= connectionWorkProbe(connection);
    connection.once('close', () => this.leave());
  }

  /**
   * Makes `probe` tell the client's work in flight, which a draining pool waits for (a client
   * with a connection attached has one already: the connection's unanswered requests). A client
   * with no probe has nothing in flight.
   */
  trackWork(probe: WorkProbe): void {
    this.#probe = probe;
  }

  /** Whether the client has work in flight (see {@link PooledClient.trackWork}). */
  get isBusy(): boolean {
    return !this.#hasLeft && this.#probe?.isBusy === true;
  }

  /** Resolves once the client has nothing in flight, or has left. */
  whenIdle(): Promise<void> {
    if (!this.isBusy) return Promise.resolve();
    return Promise.race([this.#probe!.whenIdle(), this.#hasLeftPromise]);
  }

  /** Makes `chain` the client's: closing the client or the pool shuts it down. */
  attachChain(chain: PooledChain): void {
    this.#chain = chain;
    this.#pool.holdChain(chain);
  }

  /**
   * Closes the client once `socket` has carried no byte either way for the pool's `idleTimeoutMs`
   * while nothing is in flight on its connection (a client without a connection yet is idle when
   * silent). Emits `'idle'` on the pool first. Does nothing when the pool has no idle timeout.
   *
   * @remarks Uses the socket's own inactivity timer, which does not keep the process alive and
   * is cleared when the socket is destroyed.
   */
  watchIdle(socket: Socket): void {
    const isBusy = (): boolean => this.#connection !== undefined && hasWorkInFlight(this.#connection);
    watchIdle(socket, this.#pool.idleTimeoutMs, isBusy, () => void this.closeIdle());
  }

  /**
   * Closes the client because its transport found it idle: emits `'idle'` on the pool, then
   * {@link PooledClient.close}. Resolves once closed. For a transport with its own rule of what
   * idle means (whatever the pool's `idleTimeoutMs`).
   */
  closeIdle(): Promise<void> {
    this.#pool.emit('idle', this);
    return this.close();
  }

  /**
   * Closes the client: its chain if it has one, else its connection (its queued answers are
   * flushed), then its transport. Resolves once that is done. Idempotent.
   */
  async close(): Promise<void> {
    this.#beforeClose();
    if (this.#chain) await this.#chain.close();
    else if (this.#connection) await this.#connection.close();
    await this.#endTransport();
  }

  /** Frees the slot, once; for a client admitted that will never have a transport. */
  leave(): void {
    if (this.#hasLeft) return;
    this.#hasLeft = true;
    this.#left();
    this.#release(this);
  }
}

/**
 * Counts, bounds and closes the clients of a server; transports accept them and hand them over.
 *
 * @remarks
 * - {@link ClientPool.admit} gives a new client a slot while fewer than `maxClients` are served,
 *   else emits `'refused'` with a {@link ClientRefusedError} and returns `undefined`: the
 *   transport then refuses the client its own way.
 * - {@link ClientPool.drain} refuses new clients and closes each one once it has nothing in flight
 *   (see {@link PooledClient.trackWork}), cutting the rest at its deadline.
 * - {@link ClientPool.close} refuses new clients, aborts {@link ClientPool.signal}, closes every
 *   client (chains first) and resolves once every client and chain is gone. It does not stop the
 *   transport's server from listening: the transport does.
 * - The pool never logs: listen to its events.
 * @example
 * ```ts
 * const pool = new ClientPool({ maxClients: 4 });
 * pool.on('refused', (error) => console.error(`refused ${error.peer}: ${error.message}`));
 * const server = createServer((socket) => {
 *   const client = pool.admit(`${socket.remoteAddress}:${socket.remotePort}`);
 *   if (!client) return void socket.destroy();
 *   client.bind(socket, () => void socket.destroy());
 *   client.attach(socketConnection(socket));
 * });
 * ```
 */
export class ClientPool extends EventEmitter<ClientPoolEvents> {
  /** How many clients are served at once. */
  readonly maxClients: number;
  /** The idle timeout in milliseconds; `0`: none. */
  readonly idleTimeoutMs: number;
  readonly #clients = new Set<PooledClient>();
  readonly #work = new Set<Promise<unknown>>();
  readonly #chains = new Set<PooledChain>();
  readonly #aborter = new AbortController();
  #closing: Promise<void> | undefined;
  #draining: Promise<DrainResult> | undefined;

  /** @throws RangeError naming `maxClients` or `idleTimeoutMs` when invalid */
  constructor(options: ClientPoolOptions = {}) {
    super();
    this.maxClients = checkMaxCount('maxClients', options.maxClients ?? Number.POSITIVE_INFINITY);
    this.idleTimeoutMs = checkIdleTimeout('idleTimeoutMs', options.idleTimeoutMs ?? 0);
  }

  /** How many clients are being served now. */
  get size(): number {
    return this.#clients.size;
  }

  /** The clients being served now. */
  get clients(): ReadonlySet<PooledClient> {
    return this.#clients;
  }

  /** Whether {@link ClientPool.close} has been called. */
  get isClosing(): boolean {
    return this.#closing !== undefined;
  }

  /** Whether {@link ClientPool.drain} has been called. */
  get isDraining(): boolean {
    return this.#draining !== undefined;
  }

  /** Aborted when {@link ClientPool.close} begins: for work that starts a client's chain. */
  get signal(): AbortSignal {
    return this.#aborter.signal;
  }

  /**
   * Gives a new client a slot while fewer than `maxClients` are served and the pool is not closing.
   *
   * @remarks Bind the client's transport at once ({@link PooledClient.bind}): the slot is freed
   * when that transport (or the connection attached) closes, or by {@link PooledClient.leave}.
   * @param peer - who the client is, for the events
   * @returns the client, or `undefined` when refused (then `'refused'` has been emitted)
   */
  admit(peer: string): PooledClient | undefined {
    const refusal = this.#refusal();
    if (refusal) {
      this.emit('refused', new ClientRefusedError(refusal, peer, this.#clients.size));
      return undefined;
    }
    const client = new PooledClient(this, peer, (left) => {
      this.#clients.delete(left);
      this.emit('closed', left);
    });
    this.#clients.add(client);
    this.emit('accepted', client);
    return client;
  }

  #refusal(): RefusalCode | undefined {
    if (this.isClosing) return 'ACP_WIRE_SERVER_CLOSED';
    if (this.isDraining) return 'ACP_WIRE_SERVER_DRAINING';
    return this.#clients.size >= this.maxClients ? 'ACP_WIRE_CLIENT_LIMIT' : undefined;
  }

  /**
   * Refuses new clients (`ACP_WIRE_SERVER_DRAINING`), closes each client as soon as it has
   * nothing in flight (see {@link PooledClient.whenIdle}): an idle one at once, a busy one once
   * its last request is answered; at `timeoutMs`, closes the busy ones left all the same, and
   * emits `'cut'` for each. Resolves once every client served when it began has been closed.
   *
   * @remarks Idempotent: a second call returns the first one's promise. Does not close the pool
   * (chains still starting, new work): call {@link ClientPool.close} after it. Each client is
   * closed as by {@link PooledClient.close}.
   * @throws RangeError naming `timeoutMs` when invalid
   */
  drain(options: DrainPoolOptions): Promise<DrainResult> {
    const timeoutMs = checkIdleTimeout('timeoutMs', options.timeoutMs);
    this.#draining ??= this.#drainAll(timeoutMs);
    return this.#draining;
  }

  async #drainAll(timeoutMs: number): Promise<DrainResult> {
    const clients = [...this.#clients];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), timeoutMs)));
    let cut = 0;
    await Promise.all(
      clients.map(async (client) => {
        const outcome = await Promise.race([client.whenIdle().then(() => 'idle' as const), deadline]);
        if (outcome === 'deadline' && client.isBusy) {
          cut += 1;
          this.emit('cut', client);
        }
        await client.close();
      }),
    );
    clearTimeout(timer);
    return { clients: clients.length, cut };
  }

  /** Makes {@link ClientPool.close} wait for `work` (e.g. a chain being started) to settle. */
  track(work: Promise<unknown>): void {
    const settled = work.then(ignore, ignore).finally(() => this.#work.delete(settled));
    this.#work.add(settled);
  }

  /** Keeps `chain` until it has ended, to shut it down on {@link ClientPool.close}. @internal */
  holdChain(chain: PooledChain): void {
    this.#chains.add(chain);
    this.track(chain.closed.finally(() => this.#chains.delete(chain)));
    if (this.isClosing) void chain.close();
  }

  /** Refuses new clients, closes every client and chain, and resolves once all are gone. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  /** Same as {@link ClientPool.close}: `await using pool = new ClientPool(…)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #closeAll(): Promise<void> {
    this.#aborter.abort();
    await Promise.all([...this.#clients].map((client) => client.close()));
    // Chains whose client has left but which are still shutting down, and chains still starting.
    await Promise.all([...this.#chains].map((chain) => chain.close()));
    while (this.#work.size > 0) await Promise.all([...this.#work]);
  }
}

function ignore(): void {}
