/**
 * W3C trace context (`traceparent`, `tracestate`, `baggage`) in a message's `_meta`, as ACP
 * reserves it: parsing, formatting, and the child span each hop of a chain gives a message.
 *
 * @packageDocumentation
 */
import type * as CryptoModule from 'node:crypto';

/** The `_meta` key of the W3C `traceparent` header value. */
export const TRACEPARENT_META_KEY = 'traceparent';
/** The `_meta` key of the W3C `tracestate` header value (carried unchanged). */
export const TRACESTATE_META_KEY = 'tracestate';
/** The `_meta` key of the W3C `baggage` header value (carried unchanged). */
export const BAGGAGE_META_KEY = 'baggage';

/** A parsed `traceparent`: `version-traceId-parentId-flags`, all lowercase hex. */
export interface TraceParent {
  /** Two hex digits; `00` is the only version this module writes. */
  version: string;
  /** 32 hex digits, not all zero: the whole distributed trace. */
  traceId: string;
  /** 16 hex digits, not all zero: the span of the sender of this message. */
  parentId: string;
  /** Two hex digits; bit 0 is "sampled". */
  flags: string;
}

/** The trace context a message can carry in `_meta`. */
export interface TraceContextMeta {
  /** The W3C `traceparent` value. */
  traceparent: string;
  /** The W3C `tracestate` value, carried unchanged. */
  tracestate?: string;
  /** The W3C `baggage` value, carried unchanged. */
  baggage?: string;
}

const HEX = /^[0-9a-f]+$/;

/**
 * Parses a `traceparent` value as the W3C Trace Context recommendation says.
 *
 * @remarks Returns `undefined` for anything invalid: wrong lengths, uppercase hex, version `ff`,
 * an all-zero trace id or parent id, or (for version `00`) trailing data. A later version may
 * carry more fields after the flags; they are ignored.
 * @example
 * ```ts
 * parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
 * // { version: '00', traceId: '4bf9…4736', parentId: '00f0…02b7', flags: '01' }
 * ```
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length < 55) return undefined;
  const version = value.slice(0, 2);
  if (!isHex(version, 2) || version === 'ff') return undefined;
  if (version === '00' ? value.length !== 55 : value.length > 55 && value[55] !== '-') return undefined;
  const [, traceId = '', parentId = '', flags = ''] = value.slice(0, 55).split('-');
  if (value[2] !== '-' || value[35] !== '-' || value[52] !== '-') return undefined;
  if (!isHex(traceId, 32) || !isHex(parentId, 16) || !isHex(flags, 2)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { version, traceId, parentId, flags };
}

/** Formats a `traceparent` value (always version `00`). */
export function formatTraceparent(parent: Omit<TraceParent, 'version'> & { version?: string }): string {
  return `00-${parent.traceId}-${parent.parentId}-${parent.flags}`;
}

/** A new random span id: 16 lowercase hex digits, never all zero. */
export function newSpanId(): string {
  return randomHex(8);
}

/** A new random trace id: 32 lowercase hex digits, never all zero. */
export function newTraceId(): string {
  return randomHex(16);
}

/**
 * The `traceparent` of a child span: same trace id and flags, `spanId` (default: a new random
 * one) as the parent id. `undefined` when `traceparent` is invalid.
 */
export function childTraceparent(traceparent: unknown, spanId: string = newSpanId()): string | undefined {
  const parent = parseTraceparent(traceparent);
  return parent && formatTraceparent({ ...parent, parentId: spanId });
}

/** The valid trace context in `params._meta`, or `undefined` (no `_meta`, or no valid `traceparent`). */
export function traceContextOf(params: unknown): TraceContextMeta | undefined {
  const meta = metaOf(params);
  if (!meta || !parseTraceparent(meta[TRACEPARENT_META_KEY])) return undefined;
  const context: TraceContextMeta = { traceparent: meta[TRACEPARENT_META_KEY] as string };
  if (typeof meta[TRACESTATE_META_KEY] === 'string') context.tracestate = meta[TRACESTATE_META_KEY];
  if (typeof meta[BAGGAGE_META_KEY] === 'string') context.baggage = meta[BAGGAGE_META_KEY];
  return context;
}

/**
 * `params` with `context` set in its `_meta` (object params only; anything else is returned as is).
 *
 * @remarks Copies `params` and its `_meta`; the original is not modified. This is how a client
 * attaches trace context to a request.
 * @example
 * ```ts
 * const traceparent = formatTraceparent({ traceId: newTraceId(), parentId: newSpanId(), flags: '01' });
 * client.sendRequest('session/prompt', withTraceContext(params, { traceparent }));
 * ```
 */
export function withTraceContext<P>(params: P, context: TraceContextMeta): P {
  if (!isPlainObject(params)) return params;
  const meta = isPlainObject(params._meta) ? params._meta : {};
  return { ...params, _meta: { ...meta, ...context } } as P;
}

/**
 * `params` for the next hop: when `params._meta.traceparent` is valid, a copy whose `traceparent`
 * names `spanId` (default: a new random span) as the parent, a child of the received span;
 * `tracestate` and `baggage` are carried unchanged. Otherwise `params` itself.
 */
export function withChildSpan(params: unknown, spanId?: string): unknown {
  const meta = metaOf(params);
  if (!meta) return params;
  const traceparent = childTraceparent(meta[TRACEPARENT_META_KEY], spanId);
  if (!traceparent) return params;
  return { ...(params as Record<string, unknown>), _meta: { ...meta, [TRACEPARENT_META_KEY]: traceparent } };
}

function metaOf(params: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(params)) return undefined;
  const meta = params._meta;
  return isPlainObject(meta) ? meta : undefined;
}

/**
 * Where `@opentelemetry/api` 1.x keeps what is registered process-wide (the tracer provider under
 * `trace`): the same key for every copy of the package in the process.
 */
const OTEL_GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');

/**
 * Whether an OpenTelemetry tracer provider is registered. Without one the package's tracers start
 * only non-recording spans, so there is no reason to load it, nor the library's bridge to it
 * (`trace/otel`), on the path of the first forwarded request of each process of a chain.
 * @internal
 */
export function hasTracerProvider(): boolean {
  const registered = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[OTEL_GLOBAL_KEY];
  return registered?.trace !== undefined;
}

/** `node:crypto`, loaded on first use: a proxy that forwards messages without a trace context never makes an id. */
let crypto: typeof CryptoModule | undefined;

function randomHex(bytes: number): string {
  crypto ??= require('node:crypto') as typeof CryptoModule;
  for (;;) {
    const hex = crypto.randomBytes(bytes).toString('hex');
    if (!/^0+$/.test(hex)) return hex;
  }
}

function isHex(text: string, length: number): boolean {
  return text.length === length && HEX.test(text);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
