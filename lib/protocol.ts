/**
 * Wire method names of the protocol-level messages acp-wire itself handles.
 *
 * @packageDocumentation
 */

/** The cancellation notification, sent by either side: `{"requestId": <id>}`. */
export const CANCEL_REQUEST_METHOD = '$/cancel_request';

/** The envelope a proxy chain uses to carry a message to or from a successor. */
export const PROXY_SUCCESSOR_METHOD = 'proxy/successor';

/** The older name of {@link PROXY_SUCCESSOR_METHOD}, still accepted on receipt. */
export const LEGACY_PROXY_SUCCESSOR_METHOD = '_proxy/successor';

/** `initialize` as sent by a conductor to a proxy. */
export const PROXY_INITIALIZE_METHOD = 'proxy/initialize';

/** The older name of {@link PROXY_INITIALIZE_METHOD}, still accepted on receipt. */
export const LEGACY_PROXY_INITIALIZE_METHOD = '_proxy/initialize';

/** ACP's `initialize` request. */
export const INITIALIZE_METHOD = 'initialize';

/** Whether `method` names the successor envelope (new or legacy name). */
export function isSuccessorEnvelope(method: string): boolean {
  return method === PROXY_SUCCESSOR_METHOD || method === LEGACY_PROXY_SUCCESSOR_METHOD;
}
