/**
 * One MCP request served by a provider, from its `mcp/message` to its one outcome: the inner
 * `_meta` checked, the handler called with a signal, the outcome validated, failures mapped to the
 * binding's codes, notifications dropped once it settled.
 *
 * @packageDocumentation
 */
import { RpcError } from '../jsonrpc/errors';
import type { JsonObject, JsonValue } from '../jsonrpc/message';
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

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The state of one request at its provider. @internal */
export class McpRequestRun {
  readonly #envelope: McpEnvelope;
  readonly #controller = new AbortController();
  readonly #sources: readonly AbortSignal[];
  readonly #notify: (method: string, params: JsonObject | undefined) => void;
  #done = false;
  /** Settles (never rejects) when the handler has finished. */
  settled: Promise<void> = Promise.resolve();

  constructor(envelope: McpEnvelope, sources: readonly AbortSignal[], notify: (method: string, params: JsonObject | undefined) => void) {
    this.#envelope = envelope;
    this.#sources = sources;
    this.#notify = notify;
  }

  /** Runs the handler; resolves with the outcome, rejects with the binding's `RpcError`. */
  start(handler: McpRequestHandler): Promise<McpOutcome> {
    for (const source of this.#sources) {
      if (source.aborted) this.#abort(source);
      else source.addEventListener('abort', this.#onAbort, { once: true });
    }
    const outcome = this.#run(handler);
    this.settled = outcome.then(
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

  readonly #onAbort = (event: Event): void => this.#abort(event.target as AbortSignal);

  #abort(source: AbortSignal): void {
    this.abort(source.reason);
  }

  #finish<T>(outcome: () => T): T {
    this.#done = true;
    for (const source of this.#sources) source.removeEventListener('abort', this.#onAbort);
    if (this.#controller.signal.aborted) throw cancelled();
    return outcome();
  }

  async #run(handler: McpRequestHandler): Promise<McpOutcome> {
    const { serverId, requestId, method, params, meta } = this.#envelope;
    const inner = isObject(params?._meta) ? params._meta : {};
    const protocolVersion = inner[MCP_META_PROTOCOL_VERSION];
    const clientCapabilities = inner[MCP_META_CLIENT_CAPABILITIES];
    if (typeof protocolVersion !== 'string') return invalidParams(`params._meta has no ${MCP_META_PROTOCOL_VERSION}`);
    if (protocolVersion !== MCP_PROTOCOL_VERSION) {
      const data = { supported: [MCP_PROTOCOL_VERSION], requested: protocolVersion };
      return { error: { code: -32022, message: 'Unsupported protocol version', data } };
    }
    if (!isObject(clientCapabilities)) return invalidParams(`params._meta has no ${MCP_META_CLIENT_CAPABILITIES}`);
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
  if (isObject(outcome) && Object.hasOwn(outcome, 'result') !== Object.hasOwn(outcome, 'error')) {
    const parsed = parseMcpOutcome(outcome);
    if (parsed) return parsed;
  }
  throw new InvalidOutcome(
    'MCP server handler answered no valid outcome: exactly one of a defined `result` or an `error` with an integer `code` and a string `message`',
  );
}
