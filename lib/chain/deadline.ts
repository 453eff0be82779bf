/**
 * A per-request deadline on the forwarding hops of a chain: a request that is not answered in time
 * is cancelled downstream and answered upstream.
 *
 * @packageDocumentation
 */
import type { MessageTarget } from './successor';

/**
 * Validates the conductor's `requestTimeoutMs` option: `undefined` or `0` (off), or a positive
 * number of milliseconds.
 *
 * @throws RangeError naming the option
 * @internal
 */
export function checkRequestTimeout(value: unknown): number | undefined {
  if (value === undefined || value === 0) return undefined;
  if (typeof value === 'number' && value > 0 && value <= 2 ** 31 - 1) return value;
  throw new RangeError('requestTimeoutMs must be 0 (off) or a positive number of milliseconds up to 2^31 - 1');
}

/**
 * `target`, with a deadline on every request sent through it: after `timeoutMs` without an answer
 * the request is cancelled downstream (one `$/cancel_request` with its id there) and given up at
 * once, so the request it was forwarded for is answered `-32603` with data
 * `{"reason":"request_timeout","method":<upstream method>}`; a later answer is discarded.
 * Notifications go through unchanged. Without a deadline, `target` itself.
 *
 * @internal
 */
export function withDeadline(target: MessageTarget, timeoutMs: number | undefined): MessageTarget {
  if (timeoutMs === undefined) return target;
  return {
    sendRequest: (method, params, options) => target.sendRequest(method, params, { ...options, timeout: timeoutMs, timeoutGrace: 0 }),
    sendNotification: (method, params) => target.sendNotification(method, params),
  };
}
