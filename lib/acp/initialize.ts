/**
 * The agent-side ACP `initialize` state machine: uninitialized → initializing → ready.
 *
 * @packageDocumentation
 */
import { setRequestGate, type Connection } from '../connection/connection';
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

  /** @throws TypeError if `methods` is empty */
  constructor(connection: Connection, options: InitializeGateOptions = {}) {
    const methods = new Set(options.methods ?? [INITIALIZE_METHOD]);
    const refuse = new Set(options.refuse ?? []);
    if (methods.size === 0) throw new TypeError('methods must name at least one initialize method');
    setRequestGate(connection, (request, message) => {
      if (refuse.has(message.method)) {
        return RpcError.invalidRequest(`\`${message.method}\` is not accepted on this connection`).toJSON();
      }
      if (methods.has(message.method)) {
        if (this.#state !== 'uninitialized') {
          return RpcError.invalidRequest(
            this.#state === 'ready' ? 'the connection is already initialized' : 'initialize is already in progress',
          ).toJSON();
        }
        this.#state = 'initializing';
        request.onAnswer = (isError) => {
          this.#state = isError ? 'uninitialized' : 'ready';
        };
        return undefined;
      }
      if (this.#state !== 'ready') {
        return RpcError.invalidRequest(`\`${message.method}\` needs a completed initialize first`).toJSON();
      }
      return undefined;
    });
  }

  /** The current state. */
  get state(): InitializeState {
    return this.#state;
  }
}
