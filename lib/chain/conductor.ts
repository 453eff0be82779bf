/**
 * The conductor of an ACP proxy chain: it speaks to a client, runs each component, and routes
 * messages hop by hop between them.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { RpcError } from '../jsonrpc/errors';
import { briefly, logLazily, type Logger } from '../support/logger';
import type { NotificationMessage } from '../jsonrpc/message';
import {
  INITIALIZE_METHOD,
  LEGACY_PROXY_INITIALIZE_METHOD,
  LEGACY_PROXY_SUCCESSOR_METHOD,
  PROXY_INITIALIZE_METHOD,
  PROXY_SUCCESSOR_METHOD,
} from '../jsonrpc/protocol';
import { relayBackpressure } from '../connection/relay';
import type { Responder } from '../requests/responder';
import { startConductorTrace, type ConductorTrace, type ConductorTraceOptions } from './conductor-trace';
import type { ChildExit } from '../transports/child-process';
import type { EarlyProcessTree } from '../transports/process-tree';
import {
  checkSpawned,
  describeExit,
  resolveSource,
  startComponent,
  type ChainComponent,
  type ComponentSource,
  type StartedComponent,
} from './chain-component';
import { checkRequestTimeout, withDeadline } from './deadline';
import { isCancelNotification, sendProxiedMessageTo } from './forwarding';
import { isProtocolVersion, recordNegotiatedVersion } from '../acp/negotiation';
import { successorTarget, unwrapSuccessor, type MessageTarget } from './successor';

/**
 * Options of a {@link Conductor}.
 *
 * @remarks `traceFile` and `onTraceEvent` trace the messages on the conductor's connections to
 * the components it spawns (a component given as `{ connection }` is not traced); see
 * docs/tracing.md.
 */
export interface ConductorOptions extends ConductorTraceOptions {
  /** The connection to the client (e.g. `connectStdio()` or a TCP connection). */
  client: Connection;
  /** The proxies in order, then the agent (last). At least one (the agent). */
  components: readonly ComponentSource[];
  /** The logger of the connection to each component, by name (`proxy1`, …, `agent`). Default: `ACP_WIRE_LOG`. */
  logger?: (name: string) => Logger;
  /** A spawned component's stderr: passed through (`inherit`, default), `pipe`d or `ignore`d. */
  stderr?: 'inherit' | 'pipe' | 'ignore';
  /** How long to wait for a component to exit after its stdin is closed before SIGTERM (then SIGKILL). Default 2000 ms. */
  killTimeoutMs?: number;
  /**
   * When a component cannot be started at all: how long the conductor keeps answering the client
   * (every request with `-32603`, see the class remarks) after the failure or after the client's
   * last request, before it closes the client connection. Default 2000 ms.
   */
  notStartedLingerMs?: number;
  /**
   * A deadline on every request the conductor forwards toward the agent (from the client, and a
   * proxy's `proxy/successor` requests): unanswered after this many milliseconds, it is cancelled
   * on that hop (one `$/cancel_request` with the hop's id) and the request it was forwarded for is
   * answered `-32603` with data `{"reason":"request_timeout","method"}`. Requests toward the client
   * (a permission prompt waits for a person) have none. Default `undefined` or `0`: no deadline.
   */
  requestTimeoutMs?: number;
  /**
   * Processes spawned already for components given as commands, by index (`acp-wire conduct`
   * starts them before it loads the library): each is taken instead of spawning its command
   * again. Each must be of that command and its arguments, with this process's directory and
   * environment and `stderr: 'inherit'`. @internal
   */
  spawned?: readonly (EarlyProcessTree | undefined)[];
}

/** Why and how a chain ended. */
export interface ConductorOutcome {
  /**
   * The client went away, a component ended (died or closed its connection), a component could
   * not be started at all (e.g. ENOENT), or `close()` was called.
   */
  reason: 'client closed' | 'component ended' | 'component not started' | 'closed locally';
  /** The component that ended, for `component ended` and `component not started`. */
  component?: ChainComponent;
  /** How that component's process ended, when it is a child process. */
  exit?: ChildExit;
  /** One line for a person, e.g. `agent (node agent.js) exited with code 3`. */
  message: string;
}

const ENVELOPES = [PROXY_SUCCESSOR_METHOD, LEGACY_PROXY_SUCCESSOR_METHOD];

/** The `reason` in the `-32603` data of every answer from a chain whose component could not be started. */
export const COMPONENT_NOT_STARTED_REASON = 'component_not_started';
const PROXY_INITIALIZES = [PROXY_INITIALIZE_METHOD, LEGACY_PROXY_INITIALIZE_METHOD];

/**
 * Runs a proxy chain — client → proxies… → agent — and routes every message hop by hop.
 *
 * @remarks
 * - Each component is started at once (a command is spawned with its stdio as the connection and
 *   its stderr passed through). The last component is the agent; the others are proxies.
 * - The client's messages go to the first component plain; a proxy's `proxy/successor` envelope is
 *   unwrapped and sent to the next component plain; a component's plain messages go to its
 *   predecessor — inside a `proxy/successor` envelope when that is a proxy, plain to the client.
 *   Every forwarded request gets a new id on the next connection.
 * - `initialize` is sent to a proxy as `proxy/initialize` and to the agent as `initialize`. A
 *   client's `proxy/initialize` or `proxy/successor` request is refused `-32600`, as is a
 *   `proxy/successor` request from the agent; a malformed envelope from a proxy is answered `-32602`.
 * - Backpressure goes hop by hop: while a connection's output is full, the connections that forward
 *   to it stop dispatching and, past 16 MiB held, stop reading (see {@link relayBackpressure}), so a
 *   component that does not read cannot make the conductor's memory grow without bound.
 * - Cancellation goes hop by hop: a raw `$/cancel_request` is never forwarded; the connection that
 *   receives it marks the request cancelled and the forwarded request is cancelled once on the next
 *   hop with that hop's id. A cancel for a finished request goes nowhere.
 * - No request waits forever on a hop with `requestTimeoutMs`: past it, a request forwarded toward
 *   the agent is cancelled on that hop and answered upstream `-32603`
 *   `{"reason":"request_timeout","method"}` (off by default).
 * - The protocol version each hop's `initialize` answer negotiates is kept on that hop's
 *   connection (`negotiatedVersion(component.connection)`, and the client's for the first hop)
 *   and logged at `debug` level: `agent debug negotiated ACP v1`. Proxies stay version-agnostic.
 * - When the client goes away or any component ends, the chain shuts down: every pending request
 *   is answered with an error (`-32603` with data `{"reason":"incoming_transport_closed","method"}`)
 *   where an answer can still be delivered, every connection is closed, every child is reaped
 *   (killed if it lingers), then {@link Conductor.closed} resolves. Nothing is restarted.
 * - When a component cannot be started at all (its program is missing or not executable), the
 *   other components are stopped at once and every request the client sent or sends is answered
 *   `-32603` with data `{"reason":"component_not_started","component","command","code","cause"}`
 *   (e.g. `code` `ENOENT`, `cause` `spawn nope ENOENT`); the client connection is closed once it
 *   has sent nothing for `notStartedLingerMs`, or when the client goes away. The outcome's reason
 *   is then `component not started`.
 * - The routing is installed as handlers on the client connection and on each component's
 *   connection (their `onAnyRequest`/`onAnyNotification` fallbacks and the `proxy/*` methods):
 *   do not register handlers of your own on them.
 *
 * @example
 * ```ts
 * const conductor = new Conductor({
 *   client: connectStdio(),
 *   components: ['node dist/examples/passthrough-proxy.js', 'node dist/examples/conformance-agent.js'],
 * });
 * const outcome = await conductor.closed;
 * process.exitCode = outcome.reason === 'component ended' ? 1 : 0;
 * ```
 */
export class Conductor {
  readonly #client: Connection;
  readonly #components: StartedComponent[];
  readonly #closed: Promise<ConductorOutcome>;
  /** The component that could not be started, when one could not. */
  readonly #notStarted: StartedComponent | undefined;
  readonly #trace: ConductorTrace | undefined;
  readonly #requestTimeoutMs: number | undefined;
  #end!: (outcome: Omit<ConductorOutcome, 'message' | 'exit'>) => void;

  /**
   * Starts every component and begins routing.
   *
   * @throws TypeError if `components` is empty or a component is invalid
   * @throws RangeError if `notStartedLingerMs` is not a non-negative number, or `requestTimeoutMs`
   * is neither 0 nor a positive number of milliseconds
   * @throws CommandLineError if a command line cannot be split (nothing is started)
   * @throws the file system's error if `traceFile` cannot be opened (nothing is started)
   */
  constructor(options: ConductorOptions) {
    const { client, components } = options;
    if (!client || typeof client.sendRequest !== 'function') throw new TypeError('client must be a Connection');
    if (!Array.isArray(components) || components.length === 0) throw new TypeError('components must list at least the agent');
    const lingerMs = options.notStartedLingerMs ?? 2000;
    if (!(typeof lingerMs === 'number' && lingerMs >= 0 && lingerMs < 2 ** 31)) {
      throw new RangeError('notStartedLingerMs must be a non-negative number of milliseconds');
    }
    for (const [index, source] of components.entries()) {
      checkSpawned(resolveSource(source), options.spawned?.[index], options.stderr ?? 'inherit', index);
    }
    this.#requestTimeoutMs = checkRequestTimeout(options.requestTimeoutMs);
    this.#client = client;
    const trace = (this.#trace = startConductorTrace(options));
    const last = components.length - 1;
    const role = (index: number): ChainComponent['role'] => (index === last ? 'agent' : 'proxy');
    this.#components = components.map((source, index) =>
      startComponent(source, describe(source), {
        index,
        role: role(index),
        logger: trace ? trace.loggerFor(index, role(index), options.logger) : options.logger,
        stderr: options.stderr ?? 'inherit',
        killTimeoutMs: options.killTimeoutMs,
        spawned: options.spawned?.[index],
      }),
    );
    // A spawn that failed has no pid at once; its 'error' (with the cause) follows in a tick.
    this.#notStarted = this.#components.find((component) => component.child !== undefined && component.child.pid === undefined);
    this.#closed = new Promise((resolve) => {
      let ending = false;
      this.#end = (outcome) => {
        if (ending) return;
        ending = true;
        resolve(this.#shutdown(this.#notStarted ? { reason: 'component not started', component: this.#notStarted } : outcome));
      };
    });
    if (this.#notStarted) {
      this.#refuseClient(this.#notStarted, lingerMs);
      return;
    }
    this.#routeClient();
    for (const component of this.#components) this.#routeComponent(component);
    this.#watchEnds();
    // Bounded memory end to end: each hop stops reading while the next one's output is full.
    const hops = [client, ...this.#components.map((component) => component.connection)];
    for (let i = 1; i < hops.length; i++) {
      relayBackpressure(hops[i - 1]!, hops[i]!);
      relayBackpressure(hops[i]!, hops[i - 1]!);
    }
  }

  /** The running components, proxies first, the agent last. */
  get components(): readonly ChainComponent[] {
    return this.#components;
  }

  /** Resolves once the chain has shut down (every connection closed, every child reaped). Never rejects. */
  get closed(): Promise<ConductorOutcome> {
    return this.#closed;
  }

  /** Shuts the chain down (see the class remarks) and resolves with its outcome. Idempotent. */
  close(): Promise<ConductorOutcome> {
    this.#end({ reason: 'closed locally' });
    return this.#closed;
  }

  /** `await using conductor = new Conductor(…)`: {@link Conductor.close} when the scope ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * A component could not be started: the chain cannot work. Stops the others, answers every
   * request of the client with the cause, and closes the client once it has been quiet for `lingerMs`.
   */
  #refuseClient(failed: StartedComponent, lingerMs: number): void {
    const client = this.#client;
    for (const component of this.#components) if (component !== failed) void component.close();
    let exit: ChildExit | undefined;
    void failed.exited.then((value) => (exit = value));
    let timer: NodeJS.Timeout | undefined;
    const linger = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => void client.close(), lingerMs);
    };
    client.onAnyRequest(() => {
      linger();
      // Answered synchronously once the cause is known, so an answer is never lost to the client
      // ending its input right after the request.
      if (exit) throw notStartedError(failed, exit);
      return failed.exited.then((value) => Promise.reject(notStartedError(failed, value)));
    });
    client.onAnyNotification(() => {});
    linger();
    const end = (): void => {
      clearTimeout(timer);
      this.#end({ reason: 'component not started', component: failed });
    };
    if (client.isClosed) queueMicrotask(end);
    else client.once('close', end);
  }

  #routeClient(): void {
    const client = this.#client;
    const first = withDeadline(componentTarget(this.#components[0]!, client), this.#requestTimeoutMs);
    for (const method of [...PROXY_INITIALIZES, ...ENVELOPES]) {
      client.onRequest(method, () => {
        throw RpcError.invalidRequest(`\`${method}\` is not accepted from a client`);
      });
    }
    for (const method of ENVELOPES) client.onNotification(method, (_params, message) => this.#ignore(client, message));
    client.onAnyRequest((params, responder) => sendProxiedMessageTo(first, params, responder));
    client.onAnyNotification((params, message) => sendProxiedMessageTo(first, params, message));
  }

  #routeComponent(component: StartedComponent): void {
    const { connection, index } = component;
    const up: MessageTarget = index === 0 ? this.#client : successorTarget(this.#components[index - 1]!.connection);
    const next = this.#components[index + 1];
    const down = next && withDeadline(componentTarget(next), this.#requestTimeoutMs);
    for (const method of ENVELOPES) {
      connection.onRequest(method, (params, responder) => forwardEnvelope(down, params, responder));
      connection.onNotification(method, (params, message) => {
        const inner = unwrapSuccessor(params);
        if (!down || !inner) return this.#ignore(connection, message);
        sendProxiedMessageTo(down, inner.params, innerNotification(inner.method, inner.params));
      });
    }
    connection.onAnyRequest((params, responder) => sendProxiedMessageTo(up, params, responder));
    connection.onAnyNotification((params, message) => sendProxiedMessageTo(up, params, message));
  }

  /** Logs a notification that goes nowhere (a cancel was already honoured by the connection). */
  #ignore(connection: Connection, message: NotificationMessage): void {
    if (isCancelNotification(message.method, message.params)) return;
    logLazily(
      connection.logger,
      'warn',
      () => `ignored a ${briefly(message.method)} notification that has nowhere to go: ${briefly(message.params)}`,
    );
  }

  #watchEnds(): void {
    const onEnd = (connection: Connection, end: () => void): void => {
      if (connection.isClosed) queueMicrotask(end);
      else connection.once('close', end);
    };
    onEnd(this.#client, () => this.#end({ reason: 'client closed' }));
    for (const component of this.#components) {
      onEnd(component.connection, () => this.#end({ reason: 'component ended', component }));
    }
  }

  async #shutdown(outcome: Omit<ConductorOutcome, 'message' | 'exit'>): Promise<ConductorOutcome> {
    // Closing a component fails its pending requests at once, which answers the requests they were
    // forwarded for; the client is closed after them so those answers are flushed to it.
    const exits = this.#components.map((component) => component.close());
    const clientClosed = this.#client.close();
    const settled = await Promise.all(exits);
    await clientClosed;
    this.#trace?.close();
    const { component } = outcome;
    if (!component) {
      return { ...outcome, message: outcome.reason === 'client closed' ? 'the client went away' : 'the chain was closed' };
    }
    const exit = settled[component.index];
    const message = `${component.name} (${component.description}) ${describeExit(exit)}`;
    return exit ? { ...outcome, exit, message } : { ...outcome, message };
  }
}

/** The answer to every request of a chain whose component `failed` could not be started. */
function notStartedError(failed: ChainComponent, exit: ChildExit | undefined): RpcError {
  const error = exit?.error as NodeJS.ErrnoException | undefined;
  return RpcError.internalError({
    reason: COMPONENT_NOT_STARTED_REASON,
    component: failed.name,
    command: failed.description,
    ...(typeof error?.code === 'string' ? { code: error.code } : {}),
    cause: error?.message ?? 'the process could not be started',
  });
}

/**
 * Sends to one component plain; `initialize` becomes `proxy/initialize` for a proxy. The version its
 * `initialize` answer negotiates is recorded on the component's connection (and on `upstream`, the
 * client's, for the first component) and logged at `debug` (shown by `--trace`).
 */
function componentTarget(component: ChainComponent, upstream?: Connection): MessageTarget {
  const initialize = component.role === 'proxy' ? PROXY_INITIALIZE_METHOD : INITIALIZE_METHOD;
  const rename = (method: string): string => (method === INITIALIZE_METHOD || PROXY_INITIALIZES.includes(method) ? initialize : method);
  const { connection } = component;
  return {
    sendRequest: (method, params, options) => {
      const sent = connection.sendRequest(rename(method), params, options);
      if (rename(method) === initialize) watchNegotiation(sent, [connection, ...(upstream ? [upstream] : [])]);
      return sent;
    },
    sendNotification: (method, params) => connection.sendNotification(rename(method), params),
  };
}

/** Records (and logs) the protocol version an `initialize` answer negotiates on each hop given. */
function watchNegotiation(sent: PromiseLike<unknown>, hops: readonly Connection[]): void {
  sent.then(
    (result) => {
      const version = (result as { protocolVersion?: unknown } | null)?.protocolVersion;
      if (!isProtocolVersion(version)) return;
      for (const hop of hops) {
        recordNegotiatedVersion(hop, version);
        hop.logger.log('debug', `negotiated ACP v${version}`);
      }
    },
    () => undefined,
  );
}

/** A proxy's `proxy/successor` request: unwrapped and sent to the next component. */
function forwardEnvelope(down: MessageTarget | undefined, params: unknown, responder: Responder): void {
  if (!down) throw RpcError.invalidRequest(`the agent has no successor: \`${responder.method}\` is not accepted from it`);
  const inner = unwrapSuccessor(params);
  if (!inner) throw RpcError.invalidParams(`malformed \`${responder.method}\` envelope`);
  sendProxiedMessageTo(down, inner.params, responder, inner.method);
}

function innerNotification(method: string, params: unknown): NotificationMessage {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params: params as NotificationMessage['params'] };
}

function describe(source: ComponentSource): string {
  if (typeof source === 'string') return source;
  if ('connection' in source) return 'in-process';
  return [source.command, ...(source.args ?? [])].join(' ');
}
