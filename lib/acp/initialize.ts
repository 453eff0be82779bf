/**
 * The agent-side ACP `initialize` state machine: uninitialized → initializing → ready.
 *
 * @packageDocumentation
 */
import { setRequestGate, type Connection, type GateVerdict } from '../connection/connection';
import { RpcError } from '../jsonrpc/errors';
import { INITIALIZE_METHOD } from '../jsonrpc/protocol';

/** Where a connection is in its `initialize` handshake. */
export type InitializeState = 'uninitialized' | 'initializing' | 'ready';

/** Options of {@link InitializeGate}. */
export interface InitializeGateOptions {
  /** The method names that initialize the connection. Default `['initialize']`. */
  methods?: readonly string[];
  /** Methods always refused with `-32600` (a proxy refuses plain `initialize`). Default none. */
  refuse?: readonly string[];
}

/**
 * Enforces ACP's `initialize` rules on the receiving side of a connection.
 *
 * @remarks
 * - A failed `initialize` (error answer, handler error, dropped responder, no handler) returns the
 *   connection to `uninitialized`: the client may retry.
 * - `initialize` while initializing or ready is refused `-32600` with a string `data` saying so; a
 *   ready connection stays ready.
 * - Any other request before ready, known method or not, is refused `-32600` with `data` naming it.
 * - Notifications are never gated: `$/cancel_request` reaches an `initialize` in progress.
 *
 * Register the `initialize` handler on the connection as usual; the gate only decides what reaches
 * the handlers.
 *
 * @example
 * ```ts
 * const connection = connectStdio();
 * const gate = new InitializeGate(connection);
 * connection.onRequest('initialize', () => ({ protocolVersion: 2, capabilities: {} }));
 * ```
 */
export class InitializeGate {
  #state: InitializeState = 'uninitialized';
  readonly #methods: ReadonlySet<string>;
  readonly #refuse: ReadonlySet<string>;

  /** @throws TypeError if `methods` is empty */
  constructor(connection: Connection, options: InitializeGateOptions = {}) {
    this.#methods = new Set(options.methods ?? [INITIALIZE_METHOD]);
    this.#refuse = new Set(options.refuse ?? []);
    if (this.#methods.size === 0) throw new TypeError('methods must name at least one initialize method');
    setRequestGate(connection, (message) => this.#decide(message.method));
  }

  /** The current state. */
  get state(): InitializeState {
    return this.#state;
  }

  /** Refuses a request, or lets it through (an `initialize` with an observer of its answer). */
  #decide(method: string): GateVerdict {
    if (this.#refuse.has(method)) return refusal(`\`${method}\` is not accepted on this connection`);
    if (this.#methods.has(method)) {
      if (this.#state !== 'uninitialized') {
        return refusal(this.#state === 'ready' ? 'the connection is already initialized' : 'initialize is already in progress');
      }
      this.#state = 'initializing';
      return { onAnswer: this.#initializeAnswered };
    }
    if (this.#state !== 'ready') return refusal(`\`${method}\` needs a completed initialize first`);
    return undefined;
  }

  /** A failed `initialize` lets the client retry; a successful one makes the connection ready. */
  readonly #initializeAnswered = (isError: boolean): void => {
    this.#state = isError ? 'uninitialized' : 'ready';
  };
}

/** Refuses a request with `-32600` and `data` saying why. */
function refusal(why: string): GateVerdict {
  return { refuse: RpcError.invalidRequest(why).toJSON() };
}
