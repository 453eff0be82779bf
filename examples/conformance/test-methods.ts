/**
 * The conformance agent's `_test/*` methods: the same in ACP v1 and v2 (see
 * shared/conformance-peer.md for their contract).
 *
 * @packageDocumentation
 */
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RpcError, type Connection, type JsonObject, type JsonValue, type NotificationMessage, type Responder } from '../../lib';
import { type Timers, noop } from './timers';

/** Every notification the agent received, in order, as `{method, params}`. */
export type Received = JsonObject[];

/** Records one received notification for `_test/received`. */
export function record(received: Received, message: Pick<NotificationMessage, 'method' | 'params'>): void {
  received.push(message.params === undefined ? { method: message.method } : { method: message.method, params: message.params });
}

/** Registers the `_test/*` methods and the recording of every notification on `connection`. */
export function handleTestMethods(connection: Connection, timers: Timers, received: Received): void {
  connection.onAnyNotification((_params, message) => record(received, message));
  connection.onNotification('_test/notifyThrow', (_params, message) => {
    record(received, message);
    throw new Error('_test/notifyThrow: this notification handler always throws');
  });
  connection.onRequest('_test/echo', (params: JsonValue | undefined) => params ?? null);
  connection.onRequest('_test/sleep', (params: unknown, responder) => sleep(params, responder, timers));
  connection.onRequest('_test/drop', (params: unknown, responder) => drop(params, responder, timers));
  connection.onRequest('_test/throw', (params: unknown) => {
    const { code, message, data } = objectParams(params);
    throw new RpcError(Number(code), String(message), data);
  });
  connection.onRequest('_test/throwPlain', (params: unknown) => {
    throw new Error(String(objectParams(params).message));
  });
  connection.onRequest('_test/hold', (params: unknown, responder) => {
    timers.after(milliseconds(objectParams(params), 'ms'), () => responder.respond({ held: true }));
  });
  connection.onRequest('_test/gc', async () => {
    await collectGarbage();
    return { ok: true };
  });
  connection.onRequest('_test/received', () => ({ notifications: [...received] }));
  connection.onRequest('_test/callClient', (params: unknown) => callClient(objectParams(params), connection, timers));
}

async function sleep(params: unknown, responder: Responder, timers: Timers): Promise<JsonValue> {
  const object = objectParams(params);
  const ms = milliseconds(object, 'ms');
  const onCancel = object.onCancel ?? 'error';
  if (onCancel !== 'error' && onCancel !== 'ignore' && onCancel !== 'partial') {
    throw RpcError.invalidParams('`onCancel` must be "error", "ignore" or "partial"');
  }
  if (onCancel === 'ignore') {
    await new Promise<void>((resolve) => timers.after(ms, resolve));
    return { slept: ms };
  }
  if ((await timers.delayUnlessCancelled(ms, responder)) === 'done') return { slept: ms };
  if (onCancel === 'partial') return { partial: true };
  throw RpcError.requestCancelled();
}

/** Returns without answering; the responder is let go of now, or by a timer after `afterMs`. */
function drop(params: unknown, responder: Responder, timers: Timers): undefined {
  const afterMs = params === undefined ? 0 : milliseconds(objectParams(params), 'afterMs', 0);
  // The timer's closure is the only holder of the responder; once it has run, nothing is.
  if (afterMs > 0) timers.after(afterMs, () => void responder);
  return undefined;
}

async function callClient(params: JsonObject, connection: Connection, timers: Timers): Promise<JsonObject> {
  const { method, params: inner, drop: isDrop } = params;
  if (typeof method !== 'string') throw RpcError.invalidParams('`method` must be a string');
  const cancelAfterMs = params.cancelAfterMs === undefined ? undefined : milliseconds(params, 'cancelAfterMs');
  if (isDrop === true) {
    sendUnconsumed(connection, method, inner);
    await collectGarbage();
    return { dropped: true };
  }
  const prepared = connection.prepareRequest<JsonValue>(method, inner);
  const handle = prepared.cancellationHandle();
  const sent = prepared.send();
  const stop = cancelAfterMs === undefined ? noop : timers.after(cancelAfterMs, () => handle.cancel());
  try {
    return { response: await sent };
  } catch (error) {
    if (error instanceof RpcError) return { response: errorJson(error) };
    throw error;
  } finally {
    stop();
  }
}

function errorJson(error: RpcError): JsonObject {
  const { code, message, data } = error.toJSON();
  return data === undefined ? { code, message } : { code, message, data };
}

/** Sends a request and lets go of its SentRequest at once (a separate frame, so nothing keeps it). */
function sendUnconsumed(connection: Connection, method: string, params: JsonValue | undefined): void {
  connection.sendRequest(method, params);
}

let gc: (() => void) | undefined;

/** A full collection, then two macrotasks so that finalizers (automatic answers, cancels) run. */
async function collectGarbage(): Promise<void> {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  // A SentRequest dropped in the job that sent it is held until the end of that job's microtasks
  // (so that an immediate await can consume it): collect after them, so the drop is seen now.
  await nextMacrotask();
  gc();
  await nextMacrotask();
  await nextMacrotask();
}

/** `params` as an object, or `-32602`. */
export function objectParams(params: unknown): JsonObject {
  if (!isObject(params)) throw RpcError.invalidParams('params must be an object');
  return params;
}

/** The non-negative number of milliseconds `object[name]` (or `fallback`), or `-32602`. */
export function milliseconds(object: JsonObject, name: string, fallback?: number): number {
  const value = object[name] ?? fallback;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
    throw RpcError.invalidParams(`\`${name}\` must be a non-negative number of milliseconds`);
  }
  return value;
}

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
