/**
 * How {@link AcpAgent} reads its requests' params.
 *
 * @packageDocumentation
 */
import { RpcError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import type { AgentInitializeRequest } from './agent-options';
import type { AcpVersion } from './negotiation';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';
import type { Implementation } from './types';

/** The `initialize` request as the agent's handler sees it. @internal */
export function initializeRequest(params: JsonObject, version: AcpVersion): AgentInitializeRequest {
  const info = isObject(params.info) ? params.info : isObject(params.clientInfo) ? params.clientInfo : undefined;
  const base = { requestedVersion: params.protocolVersion as number, clientInfo: info as Implementation | undefined, params };
  if (version === 1) {
    const clientCapabilities = isObject(params.clientCapabilities) ? (params.clientCapabilities as V1.ClientCapabilities) : undefined;
    return { ...base, version, clientCapabilities };
  }
  const clientCapabilities = isObject(params.capabilities) ? (params.capabilities as V2.ClientCapabilities) : undefined;
  return { ...base, version: 2, clientCapabilities };
}

/** `params` as an object, or `-32602`. @internal */
export function objectParams(params: unknown): JsonObject {
  if (!isObject(params)) throw RpcError.invalidParams('params must be an object');
  return params;
}

/** Whether `value` is a JSON object. @internal */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` is a promise-like. @internal */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Does nothing. @internal */
export function noop(): void {}
