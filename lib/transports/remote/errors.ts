/**
 * Local errors of the network transports (WebSocket, Streamable HTTP). Like every
 * {@link AcpWireError} they never cross the wire; a connection that ends because of one closes
 * with reason `'input error'` and the error as the cause of every `ConnectionClosedError`.
 *
 * @packageDocumentation
 */
import { AcpWireError } from '../../jsonrpc/errors';

/** WebSocket close codes that acp-wire sends or interprets (RFC 6455 §7.4.1). */
export const WebSocketCloseCode = {
  /** The connection did what it was for. */
  Normal: 1000,
  /** The endpoint is going away (a server shutting down). */
  GoingAway: 1001,
  /** A frame type the endpoint does not accept: acp-wire accepts only text frames. */
  UnsupportedData: 1003,
  /** The connection dropped without a close frame (never sent, only reported). */
  Abnormal: 1006,
  /** A text frame that is not valid UTF-8. */
  InvalidPayload: 1007,
  /** A message over the size limit. */
  MessageTooBig: 1009,
} as const;

/**
 * A WebSocket closed for a reason other than a normal end: the peer sent a binary frame (1003),
 * invalid UTF-8 (1007) or a message over `maxPayload` (1009), or the peer closed with such a
 * code, or the TCP connection dropped without a close frame (1006).
 */
export class WebSocketCloseError extends AcpWireError {
  /** Always `'WebSocketCloseError'`. */
  override readonly name = 'WebSocketCloseError';
  /** Always `'ACP_WIRE_WEBSOCKET_CLOSED'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_WEBSOCKET_CLOSED';
  /**
   * @param closeCode - the WebSocket close code
   * @param closeReason - the close frame's reason text (may be empty)
   * @param isLocal - whether this side closed (it found the peer's frame unacceptable)
   */
  constructor(
    readonly closeCode: number,
    readonly closeReason: string,
    readonly isLocal: boolean,
    options?: ErrorOptions,
  ) {
    super(
      `${isLocal ? 'closed the WebSocket' : 'the WebSocket was closed'} with code ${closeCode}${closeReason ? ` (${closeReason})` : ''}`,
      options,
    );
  }
}

/** The peer answered no ping and sent nothing within the heartbeat's timeout: it is presumed gone. */
export class HeartbeatTimeoutError extends AcpWireError {
  /** Always `'HeartbeatTimeoutError'`. */
  override readonly name = 'HeartbeatTimeoutError';
  /** Always `'ACP_WIRE_HEARTBEAT_TIMEOUT'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_HEARTBEAT_TIMEOUT';
  /** @param timeoutMs - the heartbeat's `timeoutMs`: how long after a ping the peer stayed silent */
  constructor(
    readonly timeoutMs: number,
    options?: ErrorOptions,
  ) {
    super(`no sign of life from the peer within ${timeoutMs} ms of a ping`, options);
  }
}

/**
 * The server refused the connection: a WebSocket upgrade or a Streamable HTTP request answered
 * with an HTTP error status (401 wrong token, 403 origin refused, 404 wrong path or unknown
 * connection, …), or a response that the protocol does not allow.
 */
export class HttpStatusError extends AcpWireError {
  /** Always `'HttpStatusError'`. */
  override readonly name = 'HttpStatusError';
  /** Always `'ACP_WIRE_HTTP_STATUS'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_HTTP_STATUS';
  /**
   * @param status - the HTTP status code (0 when the response was malformed rather than refused)
   * @param body - the response body's text, cut to 8 KiB
   */
  constructor(
    readonly status: number,
    readonly body: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A dropped connection could not be resumed: the server no longer holds the messages after the
 * client's last cursor (its replay buffer moved on, or the connection is gone: HTTP 409, WebSocket
 * `stream/resume_failed`), or every reconnection attempt failed. (A server that never advertised
 * resumption is not resumed: a drop ends the connection with the transport's own error.) The
 * client's connection closes with it; recover at the protocol level (ACP v2 `session/resume`, v1
 * `session/load`) on a new connection.
 */
export class ResumeFailedError extends AcpWireError {
  /** Always `'ResumeFailedError'`. */
  override readonly name = 'ResumeFailedError';
  /** Always `'ACP_WIRE_RESUME_FAILED'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_RESUME_FAILED';
  /**
   * @param reason - why: `'refused'` (the server refused the cursor, 409 or `stream/resume_failed`,
   * or no longer holds the connection: a Streamable HTTP POST answered 404) or `'attempts'` (every
   * attempt failed)
   * @param detail - the server's reason text, or the last attempt's error message
   */
  constructor(
    readonly reason: 'refused' | 'attempts',
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`could not resume the connection (${reason}): ${detail}`, options);
  }
}

/**
 * The server ended a client's connection to send it elsewhere: it is draining or shutting down
 * (WebSocket close 1001), or, over Streamable HTTP where no close code exists, it ended the
 * connection's event stream (a drain, a shutdown, or its agent ending). Reported only to a client
 * with `reconnect`, which does not resume such a connection: a new connection (behind a load
 * balancer, on another host) is the way on; pending requests reject with `ConnectionClosedError`
 * whose `cause` it is.
 */
export class ServerGoingAwayError extends AcpWireError {
  /** Always `'ServerGoingAwayError'`. */
  override readonly name = 'ServerGoingAwayError';
  /** Always `'ACP_WIRE_SERVER_GOING_AWAY'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_SERVER_GOING_AWAY';
  /**
   * @param closeCode - the WebSocket close code (1001), or `undefined` over Streamable HTTP
   * @param detail - the close frame's reason text, or what ended over HTTP
   */
  constructor(
    readonly closeCode: number | undefined,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`the server ended the connection to send the client elsewhere: ${detail}`, options);
  }
}
