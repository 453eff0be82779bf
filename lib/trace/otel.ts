/**
 * Optional OpenTelemetry: when `@opentelemetry/api` is installed and a tracer provider is
 * registered, each forwarded request gets a span. Without the package, or without a registered
 * tracer provider, the package is not loaded and nothing costs anything.
 *
 * @packageDocumentation
 */
import { RpcError, ConnectionClosedError } from '../jsonrpc/errors';
import type { ErrorObject, JsonValue, RequestId } from '../jsonrpc/message';
import type { Responder } from '../requests/responder';
import type { SentRequest } from '../requests/sent-request';
import { TRACEPARENT_META_KEY, TRACESTATE_META_KEY, formatTraceparent, hasTracerProvider, parseTraceparent } from './context';

// The few parts of `@opentelemetry/api` used here, typed structurally so that acp-wire's own
// declarations never name the optional package.
interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: unknown;
}
type Attributes = Record<string, string | number | boolean>;
interface Span {
  spanContext(): SpanContext;
  isRecording(): boolean;
  setAttribute(key: string, value: string | number | boolean): unknown;
  addEvent(name: string, attributes?: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}
interface Tracer {
  startSpan(name: string, options: { kind: number; attributes: Attributes }, context: unknown): Span;
}
interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): Tracer;
    setSpanContext(context: unknown, spanContext: SpanContext): unknown;
  };
  context: { active(): unknown };
  createTraceState?(text: string): unknown;
  SpanKind: { CLIENT: number };
  SpanStatusCode: { OK: number; ERROR: number };
}

let loaded: OtelApi | null | undefined;

/** `@opentelemetry/api`, if it can be required (looked up once). @internal */
export function otelApi(): OtelApi | undefined {
  if (loaded === undefined) {
    try {
      loaded = require('@opentelemetry/api') as OtelApi;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** How an error answer came about, when the library (not a handler) wrote it. */
export type AutomaticAnswer = 'cancelled' | 'dropped_responder' | 'transport_closed' | 'request_timeout';

/**
 * Recognizes the answers acp-wire sends on its own: `-32800` (a cancelled request whose responder
 * was dropped, or answered cancelled), `-32603` for a dropped responder, and `-32603` with data
 * `{"reason":"incoming_transport_closed"}` or `"request_timeout"` for a forwarded request.
 */
export function automaticAnswerOf(error: ErrorObject): AutomaticAnswer | undefined {
  if (error.code === RpcError.requestCancelled().code) return 'cancelled';
  if (error.code !== RpcError.internalError().code) return undefined;
  const data = error.data as JsonValue | undefined;
  if (typeof data === 'string' && data.startsWith('request handler dropped its responder')) return 'dropped_responder';
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    if (data.reason === 'incoming_transport_closed') return 'transport_closed';
    if (data.reason === 'request_timeout') return 'request_timeout';
  }
  return undefined;
}

/** One forwarded request's span. @internal */
export interface RequestSpan {
  /** The params to send: with `_meta.traceparent` naming this span (object params only). */
  readonly params: unknown;
  /** Watches the forwarded request: its id, the upstream cancel (a span event) and the outcome. */
  watch(sent: SentRequest<unknown>, origin: Responder<never>): void;
  /** The request could not be sent or forwarded. */
  fail(error: unknown): void;
}

/**
 * Starts the span of a request forwarded as `method`, a child of the context in
 * `params._meta.traceparent` (else of the active context), or returns `undefined` when
 * OpenTelemetry is absent or records nothing (no provider registered). @internal
 */
export function startRequestSpan(method: string, params: unknown, origin: Responder<never>): RequestSpan | undefined {
  if (!hasTracerProvider()) return undefined;
  const api = otelApi();
  if (!api) return undefined;
  const span = api.trace.getTracer('acp-wire').startSpan(
    method,
    {
      kind: api.SpanKind.CLIENT,
      attributes: { 'rpc.system': 'jsonrpc', 'rpc.method': method, 'rpc.jsonrpc.request_id': idText(origin.id) },
    },
    parentContext(api, params),
  );
  if (!span.isRecording()) {
    span.end();
    return undefined;
  }
  return new OtelRequestSpan(api, span, inject(params, span.spanContext()));
}

class OtelRequestSpan implements RequestSpan {
  constructor(
    readonly api: OtelApi,
    readonly span: Span,
    readonly params: unknown,
  ) {}

  watch(sent: SentRequest<unknown>, origin: Responder<never>): void {
    const { span } = this;
    span.setAttribute('acp_wire.forwarded_request_id', idText(sent.id));
    const upstreamId = idText(origin.id);
    const signal = origin.signal;
    const onAbort = (): void => {
      if (!(signal.reason instanceof RpcError)) return;
      span.setAttribute('acp_wire.cancelled', true);
      span.addEvent('$/cancel_request', {
        'rpc.jsonrpc.request_id': upstreamId,
        'acp_wire.forwarded_request_id': idText(sent.id),
        'acp_wire.cancel_forwarded': !sent.isSettled,
      });
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    sent
      .then(
        () => this.#end('result', undefined),
        (error: unknown) => this.#end(undefined, error),
      )
      .finally(() => signal.removeEventListener('abort', onAbort));
  }

  fail(error: unknown): void {
    this.#end(undefined, error);
  }

  #end(outcome: 'result' | undefined, error: unknown): void {
    const { span, api } = this;
    if (outcome) {
      span.setAttribute('acp_wire.outcome', outcome);
    } else if (error instanceof RpcError) {
      const automatic = automaticAnswerOf(error.toJSON());
      span.setAttribute('rpc.jsonrpc.error_code', error.code);
      span.setAttribute('rpc.jsonrpc.error_message', error.message);
      span.setAttribute('acp_wire.outcome', automatic === 'cancelled' ? 'cancelled' : 'error');
      if (automatic) span.setAttribute('acp_wire.automatic_answer', automatic);
      if (automatic !== 'cancelled') span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message });
    } else {
      const closed = error instanceof ConnectionClosedError;
      span.setAttribute('acp_wire.outcome', closed ? 'transport_closed' : 'failed');
      if (closed) span.setAttribute('acp_wire.automatic_answer', 'transport_closed');
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
    span.end();
  }
}

function parentContext(api: OtelApi, params: unknown): unknown {
  const meta = metaOf(params);
  const parent = parseTraceparent(meta?.[TRACEPARENT_META_KEY]);
  if (!parent) return api.context.active();
  const state = meta?.[TRACESTATE_META_KEY];
  return api.trace.setSpanContext(api.context.active(), {
    traceId: parent.traceId,
    spanId: parent.parentId,
    traceFlags: Number.parseInt(parent.flags, 16),
    isRemote: true,
    ...(typeof state === 'string' && api.createTraceState ? { traceState: api.createTraceState(state) } : {}),
  });
}

/** `params` with `_meta.traceparent` naming the span (object params only; `_meta` otherwise kept). */
function inject(params: unknown, context: SpanContext): unknown {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return params;
  const record = params as Record<string, unknown>;
  const meta = metaOf(params) ?? {};
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = formatTraceparent({ traceId: context.traceId, parentId: context.spanId, flags });
  return { ...record, _meta: { ...meta, [TRACEPARENT_META_KEY]: traceparent } };
}

function metaOf(params: unknown): Record<string, unknown> | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  const meta = (params as Record<string, unknown>)._meta;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined;
}

/** An id as its JSON text; `''` for a request that was never sent (no id). */
function idText(id: RequestId | undefined): string {
  return id === undefined ? '' : JSON.stringify(id);
}
