/**
 * Running one request handler and turning its outcome into the request's answer.
 *
 * @packageDocumentation
 */
import { RpcError, describeThrown } from '../jsonrpc/errors';
import type { InboundRequest } from './inbound-request';
import type { Logger } from '../support/logger';
import { Responder } from './responder';
import type { RequestHandler } from './router';

/**
 * Calls `handler` with `params` and a new {@link Responder}, and answers from its outcome.
 *
 * @remarks
 * A value (or a promise of one) answers with it; a throw or rejection answers with the error (see
 * `RpcError.fromThrown`); `undefined` leaves the responder in charge, and the responder is then
 * registered so that dropping it answers automatically. A handler that answers before it returns
 * never pays for the registration. A failure after an answer is logged, never sent. A returned
 * value whose `then` cannot be read (a throwing getter) or throws when called fails like a throw:
 * nothing a handler returns escapes dispatch.
 *
 * @internal
 */
export function callRequestHandler(handler: RequestHandler, params: unknown, request: InboundRequest, logger: Logger): void {
  const responder = new Responder(request);
  let returned: unknown;
  let then: ThenMethod | undefined;
  try {
    returned = handler(params, responder);
    then = thenOf(returned);
  } catch (thrown) {
    return handlerFailed(request, thrown, logger);
  }
  if (then === undefined) return handlerReturned(responder, request, returned, logger);
  // Registered once the handler has returned (the responder is on the stack until then) and only
  // while unanswered.
  request.handlerReturnedPromise(responder);
  try {
    // The callbacks hold the responder: it stays reachable while the handler's promise is pending.
    then.call(
      returned,
      (value) => handlerReturned(responder, request, value, logger),
      (thrown) => handlerFailed(request, thrown, logger),
    );
  } catch (thrown) {
    handlerFailed(request, thrown, logger);
  }
}

function handlerReturned(responder: Responder, request: InboundRequest, value: unknown, logger: Logger): void {
  if (request.isSettled) return;
  if (value === undefined) return request.handlerFinished(responder);
  try {
    responder.respond(value);
  } catch (thrown) {
    // The returned value could not be serialized: answer with that failure instead.
    handlerFailed(request, thrown, logger);
  }
}

function handlerFailed(request: InboundRequest, thrown: unknown, logger: Logger): void {
  if (request.isSettled) {
    logger.log('warn', `handler of \`${request.method}\` failed after answering: ${describeThrown(thrown)}`);
    return;
  }
  try {
    request.deliver(undefined, RpcError.fromThrown(thrown));
  } catch (unserializable) {
    // An error whose data cannot be serialized: say so rather than leave the request open.
    request.deliver(undefined, RpcError.internalError(describeThrown(unserializable)).toJSON());
  }
}

type ThenMethod = (this: unknown, onFulfilled: (value: unknown) => void, onRejected: (thrown: unknown) => void) => unknown;

/** The `then` method of a promise or another thenable object, else `undefined`. May throw (a getter). */
function thenOf(value: unknown): ThenMethod | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const then = (value as { then?: unknown }).then;
  return typeof then === 'function' ? (then as ThenMethod) : undefined;
}

/** Whether `value` is a promise or another thenable. @internal */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
