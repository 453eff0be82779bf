/**
 * One MCP request served by a provider, from its `mcp/message` to its one outcome: the inner
 * `_meta` checked, the handler called with a signal, the outcome validated, failures mapped to the
 * binding's codes, notifications dropped once it settled.
 *
 * @packageDocumentation
 */
import { RpcError } from '../jsonrpc/errors';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import {
  MCP_META_CLIENT_CAPABILITIES,
  MCP_META_CLIENT_INFO,
  MCP_META_PROTOCOL_VERSION,
  MCP_PROTOCOL_VERSION,
  McpBindingErrorCode,
  parseMcpOutcome,
  type McpEnvelope,
  type McpError,
  type McpOutcome,
} from './protocol';

/** What a provided server's handler receives for one MCP request. */
export interface McpRequestContext {
  /** The server the request is for. */
  readonly serverId: string;
  /** The caller's id for the request (the inner JSON-RPC id). */
  readonly requestId: string;
  /** The inner MCP method (`tools/call`, `tools/list`, `server/discover`, …). */
  readonly method: string;
  /** The inner MCP params (with their `_meta`); `undefined` when absent. */
  readonly params: JsonObject | undefined;
  /** The MCP revision of the request. */
  readonly protocolVersion: string;
  /** The calling MCP client's capabilities. */
  readonly clientCapabilities: JsonObject;
  /** The calling MCP client's info, when sent. */
  readonly clientInfo: JsonValue | undefined;
  /** The envelope's own `_meta`. */
  readonly envelopeMeta: JsonObject | undefined;
  /** Aborts when the caller cancels, the server is unregistered, or the connection closes. */
  readonly signal: AbortSignal;
  /** Sends an MCP notification scoped to this request (progress, …); dropped once it is answered. */
  notify(method: string, params?: JsonObject): void;
}

/**
 * Answers one MCP request: return (or resolve) its outcome, `{result}` or `{error}`, or throw an
 * {@link McpProtocolError} for an MCP error. Anything else thrown is the binding's `-33002` (or
 * `-32800` once the request was cancelled).
 */
export type McpRequestHandler = (context: McpRequestContext) => McpOutcome | Promise<McpOutcome>;

/** An MCP error from a handler: it is answered inside the carrier, not as an ACP error. */
export class McpProtocolError extends Error {
  /** Always `'McpProtocolError'`. */
  override readonly name = 'McpProtocolError';
  /** The MCP error code. */
  readonly code: number;
  /** The MCP error's data, if any. */
  readonly data: JsonValue | undefined;

  /**
   * @param code - the MCP error code (an integer)
   * @param message - the MCP error message
   * @param data - the MCP error's data
   */
  constructor(code: number, message: string, data?: JsonValue) {
    super(message);
    this.code = code;
    this.data = data;
  }

  /** The inner MCP error object. */
  toMcpError(): McpError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data as McpError['data'] };
  }
}

/** A failure the binding found itself (the handler's outcome was not one). */
class InvalidOutcome extends Error {}

/** The state of one request at its provider. @internal */
export class McpRequestRun {
  readonly #envelope: McpEnvelope;
  readonly #controller = new AbortController();
  readonly #callerSignal: AbortSignal;
  readonly #notify: (method: string, params: JsonObject | undefined) => void;
  #done = false;
  #settled: Promise<void> = Promise.resolve();

  /**
   * @param envelope - the request
   * @param callerSignal - aborts when the caller cancels or the connection closes
   * @param notify - sends one of the request's notifications toward the caller
   */
  constructor(envelope: McpEnvelope, callerSignal: AbortSignal, notify: (method: string, params: JsonObject | undefined) => void) {
    this.#envelope = envelope;
    this.#callerSignal = callerSignal;
    this.#notify = notify;
  }

  /** Settles (never rejects) when the handler has finished. */
  get settled(): Promise<void> {
    return this.#settled;
  }

  /** Runs the handler; resolves with the outcome, rejects with the binding's `RpcError`. */
  start(handler: McpRequestHandler): Promise<McpOutcome> {
    if (this.#callerSignal.aborted) this.abort(this.#callerSignal.reason);
    else this.#callerSignal.addEventListener('abort', this.#onAbort, { once: true });
    const outcome = this.#run(handler);
    this.#settled = outcome.then(
      () => undefined,
      () => undefined,
    );
    return outcome.then(
      (value) => this.#finish(() => value),
      (error: unknown) =>
        this.#finish(() => {
          throw this.#outerError(error);
        }),
    );
  }

  /** Aborts the handler's signal with `reason` (the server was unregistered); the request is answered `-32800`. */
  abort(reason: unknown): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  readonly #onAbort = (): void => this.abort(this.#callerSignal.reason);

  #finish<T>(outcome: () => T): T {
    this.#done = true;
    this.#callerSignal.removeEventListener('abort', this.#onAbort);
    if (this.#controller.signal.aborted) throw cancelled();
    return outcome();
  }

  async #run(handler: McpRequestHandler): Promise<McpOutcome> {
    const { serverId, requestId, method, params, meta } = this.#envelope;
    const inner = isJsonObject(params?._meta) ? params._meta : {};
    const protocolVersion = inner[MCP_META_PROTOCOL_VERSION];
    const clientCapabilities = inner[MCP_META_CLIENT_CAPABILITIES];
    if (typeof protocolVersion !== 'string') return invalidParams(`params._meta has no ${MCP_META_PROTOCOL_VERSION}`);
    if (protocolVersion !== MCP_PROTOCOL_VERSION) {
      const data = { supported: [MCP_PROTOCOL_VERSION], requested: protocolVersion };
      return { error: { code: -32022, message: 'Unsupported protocol version', data } };
    }
    if (!isJsonObject(clientCapabilities)) return invalidParams(`params._meta has no ${MCP_META_CLIENT_CAPABILITIES}`);
    if (this.#controller.signal.aborted) throw cancelled();
    const context: McpRequestContext = {
      serverId,
      requestId,
      method,
      params,
      protocolVersion,
      clientCapabilities,
      clientInfo: inner[MCP_META_CLIENT_INFO],
      envelopeMeta: meta,
      signal: this.#controller.signal,
      notify: (name, notificationParams) => {
        if (!this.#done) this.#notify(name, notificationParams);
      },
    };
    let outcome: unknown;
    try {
      outcome = await handler(context);
    } catch (error) {
      if (!(error instanceof McpProtocolError)) throw error;
      outcome = { error: error.toMcpError() };
    }
    return validOutcome(outcome);
  }

  #outerError(error: unknown): RpcError {
    if (error instanceof RpcError && error.code === McpBindingErrorCode.RequestCancelled) return cancelled();
    if (error instanceof InvalidOutcome) return new RpcError(McpBindingErrorCode.BackendFailed, error.message);
    const details = error instanceof Error ? error.message : String(error);
    return new RpcError(McpBindingErrorCode.BackendFailed, 'MCP server handler failed', { details });
  }
}

function cancelled(): RpcError {
  return new RpcError(McpBindingErrorCode.RequestCancelled, 'Request cancelled');
}

function invalidParams(message: string): McpOutcome {
  return { error: { code: -32602, message: `Invalid params: ${message}` } };
}

/** Exactly one of a defined `result` or an MCP `error`, as the binding requires of a sender. */
function validOutcome(outcome: unknown): McpOutcome {
  if (isJsonObject(outcome) && Object.hasOwn(outcome, 'result') !== Object.hasOwn(outcome, 'error')) {
    const parsed = parseMcpOutcome(outcome);
    if (parsed) return parsed;
  }
  throw new InvalidOutcome(
    'MCP server handler answered no valid outcome: exactly one of a defined `result` or an `error` with an integer `code` and a string `message`',
  );
}
