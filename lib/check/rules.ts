/**
 * The rules `acp-wire check` holds agents to, each with its severity, its words and where they
 * are written: the ACP specification and schema, JSON-RPC 2.0, RFC 8259, and, for good practice,
 * the convention it follows.
 *
 * @packageDocumentation
 */

/** How binding a rule is: a `must` of the ACP spec or JSON-RPC 2.0, a `should`, or good `practice`. */
export type Severity = 'must' | 'should' | 'practice';

/** The severities from the most binding down. */
export const SEVERITIES: readonly Severity[] = ['must', 'should', 'practice'];

/** One rule: how binding it is, the text that says so (quoted), where, and a link to it. */
export interface Rule {
  /** How binding it is: a failure at or above a run's `failOn` fails the run. */
  readonly severity: Severity;
  /** Whose rule: `ACP`, `ACP schema`, `JSON-RPC 2.0`, `RFC 8259`, or the convention's name. */
  readonly source: string;
  /** The rule's own words. */
  readonly quote: string;
  /** Where it is written. */
  readonly url: string;
}

/** Whether a failure of `severity` fails a run whose threshold is `failOn`. */
export function isAtLeast(severity: Severity, failOn: Severity): boolean {
  return SEVERITIES.indexOf(severity) <= SEVERITIES.indexOf(failOn);
}

const JSON_RPC = 'https://www.jsonrpc.org/specification';
const ACP = 'https://agentclientprotocol.com/protocol';

const RFD_REMOTE = 'https://agentclientprotocol.com/rfds/streamable-http-websocket-transport';
const RFD_RESUME = 'https://agentclientprotocol.com/rfds/durable-resumable-http-transport';
const RFC_9110 = 'https://www.rfc-editor.org/rfc/rfc9110';
const RFD_PROXY = 'https://agentclientprotocol.com/rfds/proxy-chains';
const PRACTICE = 'https://github.com/acp-wire/acp-wire/blob/main/docs/check.md#good-practice';

const rule = (severity: Severity, source: string, quote: string, url: string): Rule => ({ severity, source, quote, url });

/** Every rule a check cites, by name. */
export const RULES = {
  utf8: rule('must', 'ACP', 'JSON-RPC messages MUST be UTF-8 encoded.', `${ACP}/transports`),
  stdoutOnlyMessages: rule(
    'must',
    'ACP',
    'The agent MUST NOT write anything to its stdout that is not a valid ACP message.',
    `${ACP}/transports#stdio`,
  ),
  crlfIsWhitespace: rule(
    'should',
    'RFC 8259',
    'Insignificant whitespace is allowed before or after any of the six structural characters. (ws includes %x0D, carriage return)',
    'https://www.rfc-editor.org/rfc/rfc8259#section-2',
  ),
  parseErrorAnswered: rule(
    'should',
    'JSON-RPC 2.0',
    '-32700 Parse error: Invalid JSON was received by the server. An error occurred on the server while parsing the JSON text.',
    `${JSON_RPC}#error_object`,
  ),
  nullIdOnParseError: rule(
    'must',
    'JSON-RPC 2.0',
    'id: This member is REQUIRED. [...] If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null.',
    `${JSON_RPC}#response_object`,
  ),
  alwaysAnswered: rule(
    'must',
    'JSON-RPC 2.0',
    'When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.',
    `${JSON_RPC}#response_object`,
  ),
  idEchoed: rule(
    'must',
    'ACP schema',
    'RequestId: A JSON-RPC request ID: a string or an integer. [...] The receiver MUST reply with the same value in the response.',
    `${ACP}/v2/schema#requestid`,
  ),
  methodNotFound: rule(
    'should',
    'JSON-RPC 2.0',
    '-32601 Method not found: The method does not exist / is not available.',
    `${JSON_RPC}#error_object`,
  ),
  notificationsUnanswered: rule(
    'must',
    'JSON-RPC 2.0',
    'The Server MUST NOT reply to a Notification, including those that are within a batch request.',
    `${JSON_RPC}#notification`,
  ),
  oneResponse: rule(
    'must',
    'JSON-RPC 2.0',
    'When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications. The Response is expressed as a single JSON Object',
    `${JSON_RPC}#response_object`,
  ),
  versionNegotiation: rule(
    'must',
    'ACP',
    'If the Agent supports the requested version, it MUST respond with the same version. Otherwise, the Agent MUST respond with the latest version it supports.',
    `${ACP}/initialization#version-negotiation`,
  ),
  initializeAnswer: rule(
    'must',
    'ACP',
    'The Agent MUST respond with the chosen protocol version and the capabilities it supports.',
    `${ACP}/initialization`,
  ),
  cancelledStopReason: rule(
    'must',
    'ACP schema',
    'StopReason cancelled: This stop reason MUST be returned when the client sends a `session/cancel` notification, even if the cancellation causes exceptions in underlying operations.',
    `${ACP}/prompt-turn#cancellation`,
  ),
  turnIsItsOwn: rule(
    'should',
    'ACP',
    'A prompt turn represents a complete interaction cycle between the Client and Agent, starting with a user message and continuing until the Agent completes its response.',
    `${ACP}/prompt-turn`,
  ),
  cancelRequestOptional: rule(
    'should',
    'ACP',
    'Cancellation is cooperative. After receiving $/cancel_request, the peer may: ignore it and respond to the request normally, finish early with whatever data it has, or respond to the original request with the standard cancellation error, code -32800 ("Request cancelled").',
    `${ACP}/v1/cancellation`,
  ),
  exitAtStdinEnd: rule(
    'practice',
    'MCP stdio (the convention ACP stdio shares)',
    'For the stdio transport, the client SHOULD initiate shutdown by: First, closing the input stream to the child process (the server)',
    'https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle#shutdown',
  ),
  proxyInitialize: rule(
    'should',
    'ACP proxy chains RFD',
    'The `proxy/initialize` request has the same parameters as `initialize` and expects a standard `InitializeResponse`.',
    `${RFD_PROXY}#proxy-initialization-protocol`,
  ),
  proxyForwards: rule(
    'should',
    'ACP proxy chains RFD',
    'The proxy SHOULD forward requests it does not understand',
    `${RFD_PROXY}#proxy-initialization-protocol`,
  ),
  proxyEnvelope: rule(
    'should',
    'ACP proxy chains RFD',
    '`proxy/successor`: Used bidirectionally - proxies send it to forward messages to their successor, and the conductor sends it to deliver messages from the successor back to the proxy',
    `${RFD_PROXY}#proxying-in-practice-the-role-of-the-conductor`,
  ),
  hopIds: rule(
    'should',
    'ACP',
    'Request IDs are allocated per connection, so a $/cancel_request only ever refers to a request on the connection it is sent over',
    `${ACP}/v1/cancellation`,
  ),
  cancelHopByHop: rule(
    'should',
    'ACP',
    "Because the notification is hop-scoped, it is never tunneled across hops [...] The cancellation still reaches the next hop, re-issued by forward_response_to with that hop's own request ID.",
    `${ACP}/v1/cancellation`,
  ),
  proxyMcp: rule(
    'should',
    'ACP proxy chains RFD',
    'proxies should be prepared to handle `mcp/connect`, `mcp/message`, and `mcp/disconnect` messages for any MCP servers they provide.',
    `${RFD_PROXY}#mcp-over-acp-support`,
  ),
  httpInitialize: rule(
    'should',
    'ACP Streamable HTTP & WebSocket RFD',
    'The `initialize` request is special: it returns `200 OK` with a JSON response body containing capabilities and the `Acp-Connection-Id`. The `Acp-Connection-Id` is also included in the response header.',
    `${RFD_REMOTE}#1-adds-an-http-transport`,
  ),
  wsConnectionId: rule(
    'should',
    'ACP Streamable HTTP & WebSocket RFD',
    'A new connection is created on upgrade. The `Acp-Connection-Id` is returned in the upgrade response headers.',
    `${RFD_REMOTE}#connection-establishment-get-with-upgrade`,
  ),
  connectionIds: rule(
    'should',
    'ACP Streamable HTTP & WebSocket RFD',
    'Most POST requests return `202 Accepted` immediately with an empty body. [...] Unknown Acp-Connection-Id? → 404 Not Found',
    `${RFD_REMOTE}#unified-endpoint-routing`,
  ),
  pathDialect: rule(
    'practice',
    'acp-http-client 0.4.2 (its dialect, as acp-wire documents it)',
    '`POST` of another request: the response stays open until the agent answers; the answer is its body (200, `application/json`).',
    'https://github.com/acp-wire/acp-wire/blob/main/docs/remote.md#streamable-http-with-the-connection-id-in-the-path-acp-http-client',
  ),
  unauthorized: rule(
    'should',
    'RFC 9110',
    'The 401 (Unauthorized) status code indicates that the request has not been applied because it lacks valid authentication credentials for the target resource.',
    `${RFC_9110}#section-15.5.2`,
  ),
  capacity: rule(
    'practice',
    'RFC 9110',
    'The 503 (Service Unavailable) status code indicates that the server is currently unable to handle the request due to a temporary overload or scheduled maintenance, which will likely be alleviated after some delay. The server MAY send a Retry-After header field',
    `${RFC_9110}#section-15.6.4`,
  ),
  resumeReplay: rule(
    'should',
    'ACP durable & resumable transport RFD',
    'The server writes every message after `<cursor>` in order, then continues live. Replayed messages are the same as the originals, including their cursors',
    `${RFD_RESUME}#2-resumption-by-cursor`,
  ),
  resumeRefused: rule(
    'must',
    'ACP durable & resumable transport RFD',
    "If the cursor is unknown, is older than the server's retention window, or belongs to a connection the server no longer has, the server responds `409 Conflict` (Streamable HTTP) or a `stream/resume_failed` message with a `reason` (WebSocket). It MUST NOT silently open a live stream",
    `${RFD_RESUME}#2-resumption-by-cursor`,
  ),
  nothingLeftBehind: rule(
    'practice',
    'good practice',
    'Once the agent has exited, nothing it started still runs: its helpers end with it.',
    PRACTICE,
  ),
  clientGoneExit: rule(
    'practice',
    'good practice',
    'When its client goes away (its stdin ends, its stdout is closed), the agent exits, with code 0: it does not crash on the broken pipe, nor run on.',
    PRACTICE,
  ),
} as const satisfies Record<string, Rule>;
