/**
 * The methods an {@link AcpAgent} serves through its optional handlers: authentication, config
 * options, v1 modes, and v2's cancellation of one tool call or terminal. Each is routed in the
 * versions whose schema has it; anywhere else it is `-32601`.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { toDisposable, type Disposable } from '../support/disposable';
import { RpcError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import type { Responder } from '../requests/responder';
import type { AcpAgentOptions, AgentContext } from './agent-options';
import { isThenable, objectParams } from './agent-params';
import { unknownSession } from './agent-sessions';
import {
  AUTHENTICATE_METHOD,
  AUTH_LOGIN_METHOD,
  AUTH_LOGOUT_METHOD,
  LOGOUT_METHOD,
  SESSION_SET_CONFIG_OPTION_METHOD,
  SESSION_SET_MODE_METHOD,
  TERMINAL_CANCEL_METHOD,
  TOOL_CALL_CANCEL_METHOD,
} from './methods';
import type { AcpVersion } from './negotiation';

/** What the optional methods need from their agent. @internal */
export interface MethodsHost {
  readonly connection: Connection;
  readonly options: AcpAgentOptions;
  /** The handler context of a request. */
  context(responder: Responder): AgentContext;
  /** Whether a session with this id is open on the connection. */
  isOpen(sessionId: string): boolean;
}

/** One optional method: the versions it exists in, and how its params become the handler's result. */
interface OptionalMethod {
  readonly versions: readonly AcpVersion[];
  /** Answers the request, or `undefined` when the agent has no handler for it. */
  readonly serve: (params: JsonObject, context: AgentContext) => unknown;
}

/**
 * Registers the optional methods on the connection; returns the disposable that removes them.
 *
 * @internal
 */
export function registerAgentMethods(host: MethodsHost): Disposable {
  const registrations = Object.entries(optionalMethods(host)).map(([method, { versions, serve }]) =>
    host.connection.onRequest(method, (params, responder) => {
      const context = host.context(responder);
      if (!versions.includes(context.version)) throw RpcError.methodNotFound(method);
      const answer = serve(objectParams(params ?? {}), context);
      if (answer === NOT_SERVED) throw RpcError.methodNotFound(method);
      return isThenable(answer) ? Promise.resolve(answer).then((value) => value ?? {}) : (answer ?? {});
    }),
  );
  return toDisposable(() => {
    for (const registration of registrations) registration.dispose();
  });
}

/** What `serve` returns for a method the agent has no handler for: `-32601`. */
const NOT_SERVED = Symbol('not served');

function optionalMethods(host: MethodsHost): Record<string, OptionalMethod> {
  const { options } = host;
  const openSession = (params: JsonObject): { sessionId: string; params: JsonObject } => {
    const { sessionId } = params;
    if (typeof sessionId !== 'string') throw RpcError.invalidParams('`sessionId` must be a string');
    if (!host.isOpen(sessionId)) throw unknownSession(sessionId);
    return { sessionId, params };
  };
  const authenticate = (params: JsonObject, context: AgentContext): unknown => {
    if (!options.authenticate) return NOT_SERVED;
    return options.authenticate({ methodId: stringParam(params, 'methodId'), params }, context);
  };
  const logout = (params: JsonObject, context: AgentContext): unknown => {
    if (options.logout) return options.logout({ params }, context);
    return options.authenticate ? {} : NOT_SERVED;
  };
  const setConfigOption = (params: JsonObject, context: AgentContext): unknown => {
    if (!options.setConfigOption) return NOT_SERVED;
    const request = { ...openSession(params), configId: stringParam(params, 'configId'), value: params.value };
    const answer = options.setConfigOption(request, context);
    return isThenable(answer) ? Promise.resolve(answer).then(configOptions) : configOptions(answer);
  };
  const setMode = (params: JsonObject, context: AgentContext): unknown => {
    if (!options.setMode) return NOT_SERVED;
    return options.setMode({ ...openSession(params), modeId: stringParam(params, 'modeId') }, context);
  };
  const cancelToolCall = (params: JsonObject, context: AgentContext): unknown => {
    const request = { ...openSession(params), toolCallId: stringParam(params, 'toolCallId') };
    if (!options.cancelToolCall) throw RpcError.invalidParams(`tool call \`${request.toolCallId}\` cannot be cancelled`);
    return options.cancelToolCall(request, context);
  };
  const cancelTerminal = (params: JsonObject, context: AgentContext): unknown => {
    const request = { ...openSession(params), terminalId: stringParam(params, 'terminalId') };
    if (!options.cancelTerminal) throw RpcError.invalidParams(`terminal \`${request.terminalId}\` cannot be cancelled`);
    return options.cancelTerminal(request, context);
  };
  return {
    [AUTHENTICATE_METHOD]: { versions: [1], serve: authenticate },
    [AUTH_LOGIN_METHOD]: { versions: [2], serve: authenticate },
    [LOGOUT_METHOD]: { versions: [1], serve: logout },
    [AUTH_LOGOUT_METHOD]: { versions: [2], serve: logout },
    [SESSION_SET_CONFIG_OPTION_METHOD]: { versions: [1, 2], serve: setConfigOption },
    [SESSION_SET_MODE_METHOD]: { versions: [1], serve: setMode },
    [TOOL_CALL_CANCEL_METHOD]: { versions: [2], serve: cancelToolCall },
    [TERMINAL_CANCEL_METHOD]: { versions: [2], serve: cancelTerminal },
  };
}

function stringParam(params: JsonObject, name: string): string {
  const value = params[name];
  if (typeof value !== 'string') throw RpcError.invalidParams(`\`${name}\` must be a string`);
  return value;
}

function configOptions(options: unknown): JsonObject {
  if (!Array.isArray(options)) throw new TypeError('a setConfigOption handler must return the array of config options');
  return { configOptions: options as JsonObject[] };
}
