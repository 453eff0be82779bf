/**
 * What an {@link AcpAgent} is built from: its options, and the requests and answers its handlers
 * see.
 *
 * @packageDocumentation
 */
import type { JsonObject } from '../jsonrpc/message';
import type { AgentTurn } from './agent-turn';
import type { SESSION_LOAD_METHOD, SESSION_RESUME_METHOD } from './methods';
import type { AcpVersion } from './negotiation';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';
import type { SessionStore, StoredSession } from './session-store';
import type { ContentBlock, Implementation, StopReason } from './types';

/** What every {@link AcpAgent} handler receives beside its request. */
export interface AgentContext {
  /** The negotiated protocol version. */
  readonly version: AcpVersion;
  /** Aborts when the client cancels the request (`$/cancel_request`) or the connection closes. */
  readonly signal: AbortSignal;
}

/** An `initialize` request, as the agent's `initialize` handler sees it. */
export type AgentInitializeRequest = {
  /** The `protocolVersion` the client requested. */
  readonly requestedVersion: number;
  /** The client's name and version (v2 `info`, or v1 `clientInfo`), when it sent one. */
  readonly clientInfo: Implementation | undefined;
  /** The params as sent. */
  readonly params: JsonObject;
} & (
  | {
      /** The negotiated version is 1: `clientCapabilities` has the v1 shape. */
      readonly version: 1;
      /** The v1 `clientCapabilities` the client sent; `undefined` when absent or not an object. */
      readonly clientCapabilities: V1.ClientCapabilities | undefined;
    }
  | {
      /** The negotiated version is 2: `clientCapabilities` has the v2 shape. */
      readonly version: 2;
      /** The v2 `capabilities` the client sent; `undefined` when absent or not an object. */
      readonly clientCapabilities: V2.ClientCapabilities | undefined;
    }
);

/** What the agent answers `initialize` with, in the negotiated version's shape. */
export interface AgentInitializeAnswer {
  /** Default: {@link AcpAgentOptions.info}. */
  info?: Implementation;
  /**
   * v1 `agentCapabilities` or v2 `capabilities`, beyond what the agent derives from what it serves
   * (see {@link AcpAgent}): prompt content, MCP transports, `additionalDirectories`, `_meta`.
   * Default `{}`.
   */
  capabilities?: V1.AgentCapabilities | V2.AgentCapabilities;
  /** Default: `[]` in v1, absent in v2. Advertised only with an `authenticate` handler. */
  authMethods?: (V1.AuthMethod | V2.AuthMethod)[];
  /** ACP's reserved extension metadata: copied into the result as given. Default: absent. */
  _meta?: JsonObject;
}

/** A `session/new` request, as the agent's `newSession` handler sees it. */
export interface AgentNewSessionRequest {
  /** The session's working directory: an absolute path. */
  readonly cwd: string;
  /** The params as sent. */
  readonly params: JsonObject;
}

/** What the agent answers `session/new` with: a `sessionId` (default a new UUID) and any other result fields. */
export interface AgentNewSessionAnswer {
  /** The new session's id; prompts name it. Default: a new random UUID. */
  sessionId?: string;
  [field: string]: unknown;
}

/** A `session/load` (v1) or `session/resume` (either version) request, as the agent's `attachSession` handler sees it. */
export interface AgentAttachSessionRequest {
  /** Which method: v1 `session/load` (the history is replayed first) or `session/resume`. */
  readonly method: typeof SESSION_LOAD_METHOD | typeof SESSION_RESUME_METHOD;
  /** The session to re-attach. */
  readonly sessionId: string;
  /** Its working directory, as the client sent it: an absolute path. */
  readonly cwd: string;
  /** The session as the store keeps it, or `undefined` when the store does not know it. */
  readonly session: StoredSession | undefined;
  /** The params as sent. */
  readonly params: JsonObject;
}

/** A `session/prompt` request before its insertion, as `admitPrompt` sees it. */
export interface AgentPromptRequest {
  /** The session the prompt is for: one open on this connection. */
  readonly sessionId: string;
  /** The user's message: a non-empty array of content blocks (not checked further). */
  readonly prompt: ContentBlock[];
  /** The params as sent (`_meta` included). */
  readonly params: JsonObject;
}

/** A request about one session (`session/close`, `session/set_config_option`, …), as its handler sees it. */
export interface AgentSessionRequest {
  /** The session named: one open on this connection. */
  readonly sessionId: string;
  /** The params as sent. */
  readonly params: JsonObject;
}

/** Answers one request of an {@link AcpAgent}'s optional methods: the result, or a throw. */
export type AgentHandler<Request, Result> = (request: Request, context: AgentContext) => Result | Promise<Result>;

/** Options and handlers of an {@link AcpAgent}. */
export interface AcpAgentOptions {
  /** The agent's name and version: v1 `agentInfo`, v2 `info`. */
  info: Implementation;
  /** The versions this agent speaks. Default `[1, 2]`. */
  protocolVersions?: readonly AcpVersion[];
  /**
   * Where sessions are kept: what `session/list` reports, what `session/resume` and `session/load`
   * find, and the conversations they replay. Default: a new {@link MemorySessionStore} of this
   * agent's own. Give several agents one store to let a session move between connections.
   */
  sessions?: SessionStore;
  /**
   * How long `session/close` (and `session/delete` of an open session) waits for a running turn
   * to end after its signal aborted, in ms: past it, the turn is reported ended `cancelled` and
   * whatever its handler sends later is dropped. Default 5,000.
   */
  closeGraceMs?: number;
  /**
   * Chooses the version for an `initialize`'s params; throw an `RpcError` to refuse. Default:
   * {@link selectProtocolVersion} of `params.protocolVersion` among `protocolVersions`.
   */
  negotiate?: (params: JsonObject, supported: readonly AcpVersion[]) => number;
  /**
   * Answers `initialize` (default: `info` and the derived capabilities). Throw to fail it (the
   * client may retry); return `undefined` to leave it unanswered: the library then answers
   * automatically once the request is dropped, as for any acp-wire handler.
   */
  initialize?: (
    request: AgentInitializeRequest,
    context: AgentContext,
  ) => AgentInitializeAnswer | undefined | Promise<AgentInitializeAnswer | undefined>;
  /** Creates a session (default: a new UUID). `undefined` leaves the request unanswered, as above. */
  newSession?: (
    request: AgentNewSessionRequest,
    context: AgentContext,
  ) => AgentNewSessionAnswer | undefined | Promise<AgentNewSessionAnswer | undefined>;
  /**
   * Decides a `session/resume` or v1 `session/load`. Default: a session the store knows is
   * re-attached with `{}`, any other refused `-32002`. Return the result (`{}` at least) to
   * accept — a session the store did not know is then added to it — or throw an `RpcError` to
   * refuse; `undefined` leaves the request unanswered, as above.
   */
  attachSession?: (request: AgentAttachSessionRequest, context: AgentContext) => JsonObject | undefined | Promise<JsonObject | undefined>;
  /**
   * Runs before a prompt is inserted (validate it, hold it): throw to refuse it. Its
   * `context.signal` also aborts on `session/cancel` and `session/close`; once aborted, the prompt
   * is answered `-32800` (v1: `{stopReason: "cancelled"}`) and never inserted.
   */
  admitPrompt?: (request: AgentPromptRequest, context: AgentContext) => unknown;
  /** Runs one turn; resolves with its stop reason (default `end_turn`). See {@link AgentTurn}. */
  prompt: (turn: AgentTurn) => StopReason | void | Promise<StopReason | void>;
  /** Observes every `session/cancel` notification (after its session's work was cancelled). */
  onCancelSession?: (params: unknown) => void;
  /** Frees what the agent holds for a session once `session/close` has ended its work. */
  closeSession?: AgentHandler<AgentSessionRequest, void>;
  /**
   * v1 `authenticate`, v2 `auth/login`, with the `methodId` the client chose. Without it the agent
   * advertises no `authMethods`.
   */
  authenticate?: AgentHandler<AgentAuthenticateRequest, JsonObject | void>;
  /** v1 `logout` (advertised as `auth.logout`), v2 `auth/logout`. Default with `authenticate`: `{}`. */
  logout?: AgentHandler<AgentSessionlessRequest, JsonObject | void>;
  /** `session/set_config_option`: returns the session's whole list of config options after the change. */
  setConfigOption?: AgentHandler<AgentConfigOptionRequest, (V1.SessionConfigOption | V2.SessionConfigOption)[]>;
  /** v1 `session/set_mode`. */
  setMode?: AgentHandler<AgentModeRequest, JsonObject | void>;
  /**
   * v2 `tool_call/cancel`. Default: `-32602`, as for a tool call that is not cancellable (the
   * client sends it only for a tool call that advertised `capabilities.cancel`).
   */
  cancelToolCall?: AgentHandler<AgentToolCallRequest, JsonObject | void>;
  /** v2 `terminal/cancel`. Default: `-32602`, as for a terminal that is not cancellable. */
  cancelTerminal?: AgentHandler<AgentTerminalRequest, JsonObject | void>;
}

/** A request that names no session (`auth/login`, `logout`), as its handler sees it. */
export interface AgentSessionlessRequest {
  /** The params as sent. */
  readonly params: JsonObject;
}

/** v1 `authenticate` / v2 `auth/login`, as the `authenticate` handler sees it. */
export interface AgentAuthenticateRequest extends AgentSessionlessRequest {
  /** The id of the `authMethods` entry the client chose. */
  readonly methodId: string;
}

/** `session/set_config_option`, as the `setConfigOption` handler sees it. */
export interface AgentConfigOptionRequest extends AgentSessionRequest {
  /** The option to change. */
  readonly configId: string;
  /** Its new value, as sent (a value id, or a boolean with `type: "boolean"`). */
  readonly value: unknown;
}

/** v1 `session/set_mode`, as the `setMode` handler sees it. */
export interface AgentModeRequest extends AgentSessionRequest {
  /** The mode to switch to. */
  readonly modeId: string;
}

/** v2 `tool_call/cancel`, as the `cancelToolCall` handler sees it. */
export interface AgentToolCallRequest extends AgentSessionRequest {
  /** The tool call to cancel. */
  readonly toolCallId: string;
}

/** v2 `terminal/cancel`, as the `cancelTerminal` handler sees it. */
export interface AgentTerminalRequest extends AgentSessionRequest {
  /** The terminal to cancel. */
  readonly terminalId: string;
}
