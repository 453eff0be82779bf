/**
 * What {@link AcpClient} reads from the agent's messages: its `initialize` answer, in the
 * negotiated version's shape, and `session/update` params.
 *
 * @packageDocumentation
 */
import type { JsonObject, JsonValue } from '../jsonrpc/message';
import type { AgentInitialization } from './client-params';
import type { AcpVersion } from './negotiation';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';
import type { Implementation, SessionUpdateParams } from './types';

/** The agent's description from its `initialize` result. @internal */
export function describeAgent(version: AcpVersion, result: JsonObject): AgentInitialization {
  const v1 = version === 1;
  const info = (v1 ? (result.agentInfo ?? result.info) : (result.info ?? result.agentInfo)) ?? undefined;
  const capabilities = (v1 ? (result.agentCapabilities ?? {}) : (result.capabilities ?? {})) as JsonObject;
  const authMethods = (Array.isArray(result.authMethods) ? result.authMethods : []) as JsonObject[];
  const common = { info: info === null ? undefined : (info as unknown as Implementation) };
  return v1
    ? {
        ...common,
        protocolVersion: 1,
        capabilities: capabilities as V1.AgentCapabilities,
        authMethods: authMethods as unknown as V1.AuthMethod[],
        result: result as unknown as V1.InitializeResponse,
      }
    : {
        ...common,
        protocolVersion: 2,
        capabilities: capabilities as V2.AgentCapabilities,
        authMethods: authMethods as unknown as V2.AuthMethod[],
        result: result as unknown as V2.InitializeResponse,
      };
}

/** Whether `params` are a well-formed `session/update`'s. @internal */
export function isSessionUpdate(params: JsonValue): params is JsonValue & SessionUpdateParams {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const { sessionId, update } = params;
  return (
    typeof sessionId === 'string' &&
    typeof update === 'object' &&
    update !== null &&
    !Array.isArray(update) &&
    typeof update.sessionUpdate === 'string'
  );
}
