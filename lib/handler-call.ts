/**
 * Running one request handler and turning its outcome into the request's answer.
 *
 * @packageDocumentation
 */
import { RpcError, describeThrown } from './errors';
import type { Logger } from './logger';
import { Responder, type InboundRequest } from './responder';
import type { RequestHandler } from './router';

/**
 * Calls `handler` with `params` and a new {@link Responder}, and answers from its outcome.
 *
 * @remarks
 * A value (or a promise of one) answers with it; a throw or rejection answers with the error (an
 * `RpcError` as is, anything else `-32603`); `undefined` leaves the responder in charge, and the
 * responder is then tracked so that dropping it answers automatically. A handler that answers
 * before it returns never pays for the tracker. A failure after an answer is logged, never sent.
 *
 * @internal
 */
export function callRequestHandler(handler: RequestHandler, params: unknown, request: InboundRequest, logger: Logger): void {
  const responder = new Responder(request);
  let returned: unknown;
  try {
    returned = handler(params, responder);
  } catch (thrown) {
    return handlerFailed(responder, request, thrown, logger);
  }
  // Tracked once the handler has returned (the responder is on the stack until then) and only
  // while unanswered.
  if (isThenable(returned)) {
    request.track(responder);
    // The callbacks hold the responder: it stays reachable while the handler's promise is pending.
    returned.then(
      (value) => handlerReturned(responder, request, value, logger),
      (thrown) => handlerFailed(responder, request, thrown, logger),
    );
  } else {
    handlerReturned(responder, request, returned, logger);
    request.track(responder);
  }
}

function handlerReturned(responder: Responder, request: InboundRequest, value: unknown, logger: Logger): void {
  if (request.isSettled) return;
  if (value === undefined) return request.watchForDrop();
  try {
    responder.respond(value);
  } catch (thrown) {
    // The returned value could not be serialized: answer with that failure instead.
    handlerFailed(responder, request, thrown, logger);
  }
}

function handlerFailed(_responder: Responder, request: InboundRequest, thrown: unknown, logger: Logger): void {
  if (request.isSettled) {
    logger.log('warn', `handler of \`${request.method}\` failed after answering: ${describeThrown(thrown)}`);
    return;
  }
  try {
    request.deliver(undefined, RpcError.fromThrown(thrown));
  } catch (unserializable) {
    // An RpcError whose data cannot be serialized: say so rather than leave the request open.
    request.deliver(undefined, RpcError.internalError(describeThrown(unserializable)).toJSON());
  }
}

/** Whether `value` is a promise or another thenable. @internal */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
