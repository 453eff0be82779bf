/**
 * Trace events: the ACP Rust SDK conductor's `TraceEvent` schema, one JSON object per line of a
 * trace file, so that its viewer reads acp-wire traces unchanged (and acp-wire's viewer reads its).
 *
 * @packageDocumentation
 */
import type { JsonObject, JsonValue, RequestId } from '../jsonrpc/message';

/** `acp` for ACP messages; `mcp` for a message unwrapped from an MCP-over-ACP `mcp/message`. */
export type TraceProtocol = 'acp' | 'mcp';

/** A request from one component to another, with its id on that hop. */
export interface RequestTraceEvent {
  /** Tags a request event. */
  type: 'request';
  /** Seconds since the capture began (monotonic, fractional). */
  ts: number;
  /** Whether the request is an ACP message or an MCP message carried inside `mcp/message`. */
  protocol: TraceProtocol;
  /** `Client`, `Proxy(0)`, `Proxy(1)`, …, or `Agent`. */
  from: string;
  /** The component the request is addressed to on this hop (same names as `from`). */
  to: string;
  /** The request's id on this hop (a string, a number or `null`). */
  id: RequestId;
  /** The logical method: envelopes unwrapped, `proxy/initialize` shown as `initialize`. */
  method: string;
  /** `params.sessionId`, when it is a string. Omitted otherwise (never `null`). */
  session?: string;
  /** The params (redacted copy); `null` when the message has none. */
  params: JsonValue;
}

/** The answer to a request, travelling back along the same hop. */
export interface ResponseTraceEvent {
  /** Tags a response event. */
  type: 'response';
  /** Seconds since the capture began (monotonic, fractional). */
  ts: number;
  /** The component that answered. */
  from: string;
  /** The component that sent the request. */
  to: string;
  /** The id of the request on this hop. */
  id: RequestId;
  /** Whether the answer is an error. */
  is_error: boolean;
  /** The `result`, or the `error` object (redacted copy). */
  payload: JsonValue;
}

/** A notification from one component to another (a `$/cancel_request` too). */
export interface NotificationTraceEvent {
  /** Tags a notification event. */
  type: 'notification';
  /** Seconds since the capture began (monotonic, fractional). */
  ts: number;
  /** Whether the notification is an ACP message or an MCP message carried inside `mcp/message`. */
  protocol: TraceProtocol;
  /** The sending component: `Client`, `Proxy(0)`, …, or `Agent`. */
  from: string;
  /** The receiving component on this hop (same names as `from`). */
  to: string;
  /** The logical method: envelopes unwrapped, as for requests. */
  method: string;
  /** `params.sessionId`, when it is a string. Omitted otherwise (never `null`). */
  session?: string;
  /** The params (redacted copy); `null` when the message has none. */
  params: JsonValue;
}

/** One line of a trace file. */
export type TraceEvent = RequestTraceEvent | ResponseTraceEvent | NotificationTraceEvent;

/** The name of the client in trace events. */
export const CLIENT_COMPONENT = 'Client';
/** The name of the agent (the last component) in trace events. */
export const AGENT_COMPONENT = 'Agent';

/** The name of the proxy at `index` (from 0) in trace events: `Proxy(0)`, `Proxy(1)`, … */
export function proxyComponentName(index: number): string {
  return `Proxy(${index})`;
}

const COMPONENT: JsonObject = { type: 'string', minLength: 1 };
const ID: JsonObject = { type: ['string', 'number', 'null'] };
const TS: JsonObject = { type: 'number', minimum: 0 };
const PROTOCOL: JsonObject = { enum: ['acp', 'mcp'] };

/**
 * A JSON Schema (draft 2020-12) of one trace event, for validating trace files.
 *
 * @remarks Written from the Rust conductor's serde types: the three variants, the required fields
 * of each, `session` optional and never `null`. Unknown extra fields are allowed (a reader of the
 * format ignores them), but acp-wire never writes any.
 */
export const TRACE_EVENT_SCHEMA: Readonly<JsonObject> = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'TraceEvent',
  oneOf: [
    {
      type: 'object',
      required: ['type', 'ts', 'protocol', 'from', 'to', 'id', 'method', 'params'],
      properties: {
        type: { const: 'request' },
        ts: TS,
        protocol: PROTOCOL,
        from: COMPONENT,
        to: COMPONENT,
        id: ID,
        method: { type: 'string' },
        session: { type: 'string' },
        params: {},
      },
    },
    {
      type: 'object',
      required: ['type', 'ts', 'from', 'to', 'id', 'is_error', 'payload'],
      properties: {
        type: { const: 'response' },
        ts: TS,
        from: COMPONENT,
        to: COMPONENT,
        id: ID,
        is_error: { type: 'boolean' },
        payload: {},
      },
    },
    {
      type: 'object',
      required: ['type', 'ts', 'protocol', 'from', 'to', 'method', 'params'],
      properties: {
        type: { const: 'notification' },
        ts: TS,
        protocol: PROTOCOL,
        from: COMPONENT,
        to: COMPONENT,
        method: { type: 'string' },
        session: { type: 'string' },
        params: {},
      },
    },
  ],
};
