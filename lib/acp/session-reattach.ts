/**
 * The ACP-level fallback of a client whose transport could not resume its connection: a new
 * connection, `initialize` again, and each open session re-attached with `session/resume` (ACP v2)
 * or `session/load` (ACP v1), as the agent offers them.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { AcpWireError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import type { AgentInitialization } from './client-params';
import { SESSION_LOAD_METHOD, SESSION_RESUME_METHOD } from './methods';

/**
 * The transport errors after which {@link AcpClient} re-attaches: `ResumeFailedError` (the server
 * refused to resume, or every attempt failed) and `ServerGoingAwayError` (a draining server).
 */
const REATTACH_CODES: ReadonlySet<string> = new Set(['ACP_WIRE_RESUME_FAILED', 'ACP_WIRE_SERVER_GOING_AWAY']);

/** Options of an {@link AcpClient}'s re-attachment (`new AcpClient(connection, { reattach })`). */
export interface ReattachOptions {
  /**
   * Opens the new connection: usually the same call that opened the first one, e.g.
   * `() => connectWebSocket(url, { reconnect: true })`. `signal` aborts when the client is closed
   * meanwhile. A throw or rejection loses every session.
   */
  connect: (signal: AbortSignal) => Connection | Promise<Connection>;
  /**
   * Runs on the new connection after its `initialize` and before the sessions are re-attached,
   * e.g. `() => client.authenticate(methodId)` for an agent that wants it first. A throw or
   * rejection loses every session (`'no connection'`).
   */
  afterInitialize?: (agent: AgentInitialization) => unknown;
  /**
   * Called once per fallback, when it is over: which sessions were re-attached and which were
   * lost. A throw is an uncaught exception, as from an event listener.
   */
  onReattached?: (event: ReattachedEvent) => void;
}

/** What {@link ReattachOptions.onReattached} is told. */
export interface ReattachedEvent {
  /** The transport error that closed the previous connection (`ResumeFailedError`, `ServerGoingAwayError`). */
  readonly cause: Error;
  /** The client's connection now, or `undefined` when no new one could be opened and initialized. */
  readonly connection: Connection | undefined;
  /** The sessions re-attached on it, in the order they were opened. */
  readonly sessions: readonly string[];
  /** The sessions that could not be, each with why. */
  readonly lost: readonly SessionLostError[];
}

/**
 * A session of an {@link AcpClient} could not be re-attached after its connection was lost: the
 * agent offers neither `session/resume` (ACP v2) nor `session/load` (ACP v1), or it refused the
 * session (e.g. `-32002`: an agent on another host that does not share its session storage), or
 * no new connection could be opened and initialized.
 */
export class SessionLostError extends AcpWireError {
  /** Always `'SessionLostError'`. */
  override readonly name = 'SessionLostError';
  /** Always `'ACP_WIRE_SESSION_LOST'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_SESSION_LOST';
  /**
   * @param sessionId - the session lost
   * @param reason - `'unsupported'` (the agent offers no way to re-attach), `'refused'` (the agent
   * answered an error: the `cause`) or `'no connection'` (connecting or `initialize` failed: the `cause`)
   */
  constructor(
    readonly sessionId: string,
    readonly reason: 'unsupported' | 'refused' | 'no connection',
    options?: ErrorOptions,
  ) {
    const why = reason === 'unsupported' ? 'the agent offers neither session/resume nor session/load' : reason;
    super(`session ${sessionId} could not be re-attached (${why})`, options);
  }
}

/** How to re-open a session: its `session/new` params that `session/resume` and `session/load` take again. */
interface SessionRecord {
  readonly cwd: string;
  readonly mcpServers: readonly unknown[];
  readonly additionalDirectories?: readonly string[];
}

/** What the fallback needs of the client. @internal */
export interface ReattachHost {
  /** Makes `connection` the client's connection (handlers, subscriptions). */
  bind(connection: Connection): void;
  /** Runs `initialize` again with the first one's params and negotiated version. */
  initializeAgain(): Promise<AgentInitialization>;
  /** Sends a request on the client's connection. */
  request(method: string, params: JsonObject): PromiseLike<unknown>;
}

/**
 * The sessions an {@link AcpClient} would re-attach, and the fallback itself.
 *
 * @internal
 */
export class SessionReattacher {
  readonly #options: ReattachOptions;
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #aborter = new AbortController();

  constructor(options: ReattachOptions) {
    if (typeof options?.connect !== 'function') throw new TypeError('options.reattach.connect must be a function');
    this.#options = options;
  }

  /** Whether a connection closed with `error` is one to re-attach from (never after the client's own close). */
  shouldReattach(error: unknown): error is Error {
    if (this.#aborter.signal.aborted) return false;
    return error instanceof AcpWireError && REATTACH_CODES.has(error.code);
  }

  /** Remembers a session opened with `params` (`session/new`'s), once its id is known. */
  track(sessionId: unknown, params: JsonObject): void {
    if (typeof sessionId !== 'string' || this.#aborter.signal.aborted) return;
    const { cwd, mcpServers, additionalDirectories } = params;
    this.#sessions.set(sessionId, {
      cwd: cwd as string,
      mcpServers: Array.isArray(mcpServers) ? mcpServers : [],
      ...(Array.isArray(additionalDirectories) ? { additionalDirectories: additionalDirectories as string[] } : {}),
    });
  }

  /** Forgets a session (`session/close`): it is not re-attached. */
  forget(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }

  /** Stops for good: no later fallback, and one under way gives up (its new connection is closed). */
  stop(): void {
    this.#aborter.abort();
  }

  /** Runs the fallback after the client's connection closed with `cause`; never rejects. */
  async reattach(host: ReattachHost, cause: Error): Promise<void> {
    const ids = [...this.#sessions.keys()];
    const opened = await this.#open(host).catch((error: Error) => error);
    if (opened instanceof Error) return this.#report(cause, undefined, [], this.#lose(ids, 'no connection', opened));
    const { connection, method } = opened;
    const outcomes = await Promise.all(ids.map((id) => this.#attachOne(host, method, id)));
    const lost = outcomes.filter((outcome): outcome is SessionLostError => outcome instanceof SessionLostError);
    const sessions = ids.filter((_id, index) => outcomes[index] === undefined);
    for (const error of lost) this.#sessions.delete(error.sessionId);
    this.#report(cause, connection, sessions, lost);
  }

  async #open(host: ReattachHost): Promise<{ connection: Connection; method: ReturnType<typeof reattachMethodOf> }> {
    const signal = this.#aborter.signal;
    signal.throwIfAborted();
    const connection = await this.#options.connect(signal);
    if (signal.aborted) {
      await connection.close();
      signal.throwIfAborted();
    }
    host.bind(connection);
    try {
      const agent = await host.initializeAgain();
      await this.#options.afterInitialize?.(agent);
      return { connection, method: reattachMethodOf(agent.protocolVersion, agent.capabilities as JsonObject) };
    } catch (error) {
      await connection.close();
      throw error;
    }
  }

  async #attachOne(host: ReattachHost, method: string | undefined, sessionId: string): Promise<SessionLostError | undefined> {
    const record = this.#sessions.get(sessionId);
    if (record === undefined) return undefined; // closed meanwhile
    if (method === undefined) return new SessionLostError(sessionId, 'unsupported');
    try {
      await host.request(method, { sessionId, ...record } as unknown as JsonObject);
      return undefined;
    } catch (error) {
      return new SessionLostError(sessionId, 'refused', { cause: error });
    }
  }

  #lose(ids: readonly string[], reason: 'no connection', cause: Error): SessionLostError[] {
    for (const id of ids) this.#sessions.delete(id);
    return ids.map((id) => new SessionLostError(id, reason, { cause }));
  }

  #report(cause: Error, connection: Connection | undefined, sessions: readonly string[], lost: readonly SessionLostError[]): void {
    try {
      this.#options.onReattached?.({ cause, connection, sessions, lost });
    } catch (error) {
      // As from an event listener: the application's own failure, not the fallback's.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

/**
 * The method that re-attaches a session, from the agent's `initialize` answer: ACP v2
 * `session/resume` when it advertises `capabilities.session` (whose baseline includes it), ACP v1
 * `session/load` when `agentCapabilities.loadSession` is true; else `undefined`.
 *
 * @internal
 */
export function reattachMethodOf(
  version: number,
  capabilities: JsonObject,
): typeof SESSION_LOAD_METHOD | typeof SESSION_RESUME_METHOD | undefined {
  if (version >= 2) return typeof capabilities.session === 'object' && capabilities.session !== null ? SESSION_RESUME_METHOD : undefined;
  return capabilities.loadSession === true ? SESSION_LOAD_METHOD : undefined;
}
