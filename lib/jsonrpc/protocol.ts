/**
 * Wire method names of the protocol-level messages acp-wire itself handles.
 *
 * @packageDocumentation
 */
import { isRequestId, type RequestId } from './message';

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

/** What a `$/cancel_request` names: a valid request id, or malformed params. @internal */
export type CancelTarget = { ok: true; id: RequestId } | { ok: false };

/**
 * The request id a `$/cancel_request` names — plain, or wrapped in any number of successor
 * envelopes (any object params unwrap) — or `undefined` when the notification is not a cancel.
 *
 * @internal
 */
export function cancelTargetOf(method: string, params: unknown): CancelTarget | undefined {
  let current: unknown = method;
  let inner: unknown = params;
  while (typeof current === 'string' && isSuccessorEnvelope(current) && isPlainObject(inner)) {
    current = inner.method;
    inner = inner.params;
  }
  if (current !== CANCEL_REQUEST_METHOD) return undefined;
  if (!isPlainObject(inner) || !Object.hasOwn(inner, 'requestId') || !isRequestId(inner.requestId)) return { ok: false };
  return { ok: true, id: inner.requestId };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
