/**
 * The capabilities an {@link AcpAgent} advertises: derived from what it serves, so that it never
 * promises a method it has no handler for.
 *
 * @packageDocumentation
 */
import type { JsonObject } from '../jsonrpc/message';
import type { AcpAgentOptions, AgentInitializeAnswer } from './agent-options';
import { isObject } from './agent-params';
import type { AcpVersion } from './negotiation';
import type { SessionStore } from './session-store';

/** What an agent serves beyond the session baseline, as its capabilities say it. @internal */
export interface ServedMethods {
  /** `session/delete` (the store can forget sessions). */
  readonly delete: boolean;
  /** `authenticate` / `auth/login` (an `authenticate` handler). */
  readonly authenticate: boolean;
  /** v1 `logout` (a `logout` or `authenticate` handler). */
  readonly logout: boolean;
}

/** What `options` and `store` let an agent serve. @internal */
export function servedMethods(options: AcpAgentOptions, store: SessionStore): ServedMethods {
  return {
    delete: typeof store.delete === 'function',
    authenticate: typeof options.authenticate === 'function',
    logout: typeof options.authenticate === 'function' || typeof options.logout === 'function',
  };
}

/**
 * The `initialize` result's capabilities and `authMethods` for `answer`: the handler's own
 * capabilities (prompt content, MCP, `_meta`…) with what the agent serves added, and every
 * method-backed capability it cannot serve removed.
 *
 * @remarks Without capabilities in the answer, everything the agent serves: v2 `session` (the
 * baseline: `session/new`, `list`, `resume`, `close`, `prompt`, `cancel`, `update`) with `delete`
 * (a store that deletes) and `additionalDirectories`; v1 `loadSession` and
 * `sessionCapabilities.list`/`resume`/`close`/`delete`/`additionalDirectories`, `auth.logout`.
 * With them, those (v2 always with `session`), without what cannot be served.
 * `authMethods` only with an `authenticate` handler.
 * @internal
 */
export function advertisedCapabilities(
  version: AcpVersion,
  answer: AgentInitializeAnswer,
  served: ServedMethods,
): { capabilities: JsonObject; authMethods: JsonObject[] | undefined } {
  const given = isObject(answer.capabilities) ? { ...(answer.capabilities as JsonObject) } : undefined;
  const capabilities = version === 1 ? v1Capabilities(given, served) : v2Capabilities(given, served);
  const authMethods = served.authenticate ? (answer.authMethods as JsonObject[] | undefined) : undefined;
  return { capabilities, authMethods };
}

/**
 * v2: the session baseline is always served and advertised (`session`). Without capabilities in
 * the `initialize` answer, `session` lists all the agent serves beyond it (`delete` with a store
 * that deletes, `additionalDirectories`); with them, the answer's `session` (so an agent's answer
 * stays its own), without what it cannot serve.
 */
function v2Capabilities(given: JsonObject | undefined, served: ServedMethods): JsonObject {
  if (given === undefined) return { session: { ...(served.delete ? { delete: {} } : {}), additionalDirectories: {} } };
  const session = isObject(given.session) ? { ...given.session } : {};
  if (!served.delete) delete session.delete;
  return { ...given, session };
}

/**
 * v1: every session method beyond `new`, `prompt` and `cancel` is optional, and an agent lists the
 * ones it offers. Without capabilities in the `initialize` answer, the agent advertises all it
 * serves (`loadSession`, `sessionCapabilities.list`/`resume`/`close`, `delete` with a store that
 * deletes, `auth.logout` with a logout); with them, it advertises those (so a v1 agent's answer
 * stays its own), without what it cannot serve.
 */
function v1Capabilities(given: JsonObject | undefined, served: ServedMethods): JsonObject {
  if (given === undefined) {
    const sessionCapabilities: JsonObject = {
      list: {},
      resume: {},
      close: {},
      ...(served.delete ? { delete: {} } : {}),
      additionalDirectories: {},
    };
    return { loadSession: true, sessionCapabilities, ...(served.logout ? { auth: { logout: {} } } : {}) };
  }
  const capabilities: JsonObject = { ...given };
  if (isObject(given.sessionCapabilities) && !served.delete && 'delete' in given.sessionCapabilities) {
    const { delete: _unserved, ...rest } = given.sessionCapabilities;
    capabilities.sessionCapabilities = rest;
  }
  if (isObject(given.auth) && !served.logout && 'logout' in given.auth) {
    const { logout: _unserved, ...rest } = given.auth;
    capabilities.auth = rest;
  }
  return capabilities;
}
