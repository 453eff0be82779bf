/**
 * Turns the messages on a conductor's connections into trace events: one event per logical hop,
 * envelopes unwrapped, ids as they are on that hop, credentials redacted in the copy.
 *
 * @packageDocumentation
 */
import type { Logger } from '../support/logger';
import { classify, type JsonValue, type Message, type RequestId } from '../jsonrpc/message';
import { CANCEL_REQUEST_METHOD, LEGACY_PROXY_INITIALIZE_METHOD, PROXY_INITIALIZE_METHOD, isSuccessorEnvelope } from '../jsonrpc/protocol';
import { AGENT_COMPONENT, CLIENT_COMPONENT, proxyComponentName, type TraceEvent, type TraceProtocol } from './events';
import { redactInPlace } from './redact';

/** One message on the conductor's connection to a component, as it was on the wire. */
export interface ComponentMessage {
  /** The component's position in the chain (0 is the client's successor). */
  index: number;
  /** `agent` for the last component, `proxy` for the others. */
  role: 'proxy' | 'agent';
  /** `out`: the conductor sent it to the component; `in`: the component sent it. */
  direction: 'in' | 'out';
  /** The message (a private copy: the recorder may modify it). */
  message: Message;
}

/** The MCP-over-ACP envelope: its inner message is traced with protocol `mcp`. */
const MCP_MESSAGE_METHODS = ['mcp/message', '_mcp/message'];

/** Requests still open on one connection, by id, in each direction. */
interface Leg {
  /** Plain requests the conductor sent to the component (from its predecessor). */
  readonly down: Set<string>;
  /** Plain requests the component sent (to its predecessor). */
  readonly up: Set<string>;
}

/**
 * Records the messages on a conductor's connections as {@link TraceEvent}s.
 *
 * @remarks
 * The hop between component `k` and its predecessor (`Client` for `k = 0`) is read on the
 * conductor's connection to component `k`, so every id in an event is the id on that connection:
 * - a plain request or notification the conductor sends to `k` is traced from the predecessor to
 *   `k`; one that `k` sends plain is traced from `k` to the predecessor; the answer follows the
 *   request back on the same hop;
 * - `proxy/successor` envelopes are not traced where they are wrapped: the message is traced
 *   unwrapped on the next component's connection, where it is plain; `proxy/initialize` is traced as
 *   `initialize`; an `mcp/message` is traced as its inner method with protocol `mcp`;
 * - a `$/cancel_request` is traced on the hop of the request it names (while that request is open),
 *   so a cancel shows the id of the request on each hop it crosses.
 * `ts` counts seconds from the recorder's creation.
 */
export class TraceRecorder {
  readonly #sink: (event: TraceEvent) => void;
  readonly #start = performance.now();
  readonly #legs = new Map<number, Leg>();

  /** @param sink - receives every event, in order */
  constructor(sink: (event: TraceEvent) => void) {
    this.#sink = sink;
  }

  /** Records one message (see the class remarks for which messages make an event). */
  observe(observed: ComponentMessage): void {
    const { index, role, direction, message } = observed;
    let leg = this.#legs.get(index);
    if (!leg) this.#legs.set(index, (leg = { down: new Set(), up: new Set() }));
    const self = role === 'agent' ? AGENT_COMPONENT : proxyComponentName(index);
    const predecessor = index === 0 ? CLIENT_COMPONENT : proxyComponentName(index - 1);
    const [from, to] = direction === 'out' ? [predecessor, self] : [self, predecessor];
    const sent = direction === 'out' ? leg.down : leg.up;
    const answered = direction === 'out' ? leg.up : leg.down;
    if ('method' in message) {
      if (isSuccessorEnvelope(message.method)) return;
      const { protocol, method, params } = logical(message.method, message.params);
      if ('id' in message) {
        sent.add(idKey(message.id));
        this.#emit({ type: 'request', ts: this.#now(), protocol, from, to, id: message.id, method, ...session(params), params });
        return;
      }
      if (method === CANCEL_REQUEST_METHOD && !sent.has(idKey(requestIdOf(params)))) return;
      this.#emit({ type: 'notification', ts: this.#now(), protocol, from, to, method, ...session(params), params });
      return;
    }
    if (!answered.delete(idKey(message.id))) return;
    const isError = 'error' in message;
    const payload = redactInPlace((isError ? message.error : message.result) as JsonValue);
    this.#emit({ type: 'response', ts: this.#now(), from, to, id: message.id, is_error: isError, payload });
  }

  #now(): number {
    return (performance.now() - this.#start) / 1000;
  }

  #emit(event: TraceEvent): void {
    try {
      this.#sink(event);
    } catch {
      // A failing sink must not break the chain it watches.
    }
  }
}

/**
 * A logger that hands every line its connection sends (`->`) or receives (`<-`) to `tap`, parsed,
 * and passes records on to `base` (trace records only when `base` traces). @internal
 */
export function tapLogger(base: Logger, tap: (direction: 'in' | 'out', message: Message) => void): Logger {
  return {
    traces: true,
    log(level, text) {
      if (level === 'trace') {
        const direction = text.startsWith('-> ') ? 'out' : text.startsWith('<- ') ? 'in' : undefined;
        if (direction) tapLine(text.slice(3), direction, tap);
        if (!base.traces) return;
      }
      base.log(level, text);
    },
  };
}

function tapLine(line: string, direction: 'in' | 'out', tap: (direction: 'in' | 'out', message: Message) => void): void {
  try {
    const classified = classify(JSON.parse(line));
    if (classified.kind === 'request' || classified.kind === 'notification' || classified.kind === 'response') {
      tap(direction, classified.message);
    }
  } catch {
    // Tracing never breaks the connection it watches.
  }
}

function logical(method: string, params: unknown): { protocol: TraceProtocol; method: string; params: JsonValue } {
  if (method === PROXY_INITIALIZE_METHOD || method === LEGACY_PROXY_INITIALIZE_METHOD) {
    return { protocol: 'acp', method: 'initialize', params: redactInPlace((params ?? null) as JsonValue) };
  }
  if (MCP_MESSAGE_METHODS.includes(method) && isObject(params) && typeof params.method === 'string') {
    return { protocol: 'mcp', method: params.method, params: redactInPlace((params.params ?? null) as JsonValue) };
  }
  return { protocol: 'acp', method, params: redactInPlace((params ?? null) as JsonValue) };
}

function session(params: JsonValue): { session?: string } {
  return isObject(params) && typeof params.sessionId === 'string' ? { session: params.sessionId } : {};
}

function requestIdOf(params: JsonValue): unknown {
  return isObject(params) ? params.requestId : undefined;
}

function idKey(id: RequestId | unknown): string {
  return JSON.stringify(id) ?? 'undefined';
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
