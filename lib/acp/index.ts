/**
 * `acp-wire/acp`: the ACP endpoints: `AcpClient`, `AcpAgent`, turns, `initialize` and version
 * negotiation, method names, the generated schema types. The same classes and functions as the
 * root `acp-wire` exports under the same names; importing this entry loads only these modules and
 * what they use.
 *
 * @packageDocumentation
 */
export { InitializeGate } from './initialize';
export type { InitializeGateOptions, InitializeState } from './initialize';
export {
  ACP_PROTOCOL_VERSION,
  ACP_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
  acceptProtocolVersion,
  isProtocolVersion,
  negotiatedVersion,
  selectProtocolVersion,
  unsupportedProtocolVersion,
} from './negotiation';
export type { AcpVersion, UnsupportedProtocolVersionData } from './negotiation';
export {
  AUTHENTICATE_METHOD,
  AUTH_LOGIN_METHOD,
  FS_READ_TEXT_FILE_METHOD,
  FS_WRITE_TEXT_FILE_METHOD,
  SESSION_CANCEL_METHOD,
  SESSION_NEW_METHOD,
  SESSION_PROMPT_METHOD,
  SESSION_REQUEST_PERMISSION_METHOD,
  SESSION_UPDATE_METHOD,
  SESSION_CLOSE_METHOD,
  SESSION_LOAD_METHOD,
  SESSION_RESUME_METHOD,
  TERMINAL_METHODS,
} from './methods';
export { isSessionUpdateKind } from './types';
export type { ContentBlock, Implementation, SessionUpdate, SessionUpdateOf, SessionUpdateParams, StopReason } from './types';
export type * as AcpV1 from './schema/v1';
export type * as AcpV2 from './schema/v2';
export { AcpClient } from './client';
export type { AcpClientOptions } from './client';
export type {
  AgentInitialization,
  ClientInitializeParams,
  ListSessionsParams,
  NewSessionParams,
  PromptParams,
  ResumeSessionParams,
  SetConfigOptionParams,
  SessionUpdateHandler,
  SessionUpdateOptions,
} from './client-params';
export { SessionLostError } from './session-reattach';
export type { ReattachOptions, ReattachedEvent } from './session-reattach';
export { PromptTurn } from './turn';
export type { PromptOptions, TurnResult } from './turn';
export type { AcpClientHandlers, ClientRequestContext, ClientRequestHandler, TerminalHandlers } from './client-handlers';
export { AcpAgent } from './agent';
export type {
  AcpAgentOptions,
  AgentContext,
  AgentHandler,
  AgentInitializeAnswer,
  AgentInitializeRequest,
  AgentNewSessionAnswer,
  AgentNewSessionRequest,
  AgentAttachSessionRequest,
  AgentPromptRequest,
  AgentSessionRequest,
  AgentSessionlessRequest,
  AgentAuthenticateRequest,
  AgentConfigOptionRequest,
  AgentModeRequest,
  AgentToolCallRequest,
  AgentTerminalRequest,
} from './agent-options';
export { MemorySessionStore } from './session-store';
export type {
  MemorySessionStoreOptions,
  SessionChanges,
  SessionPage,
  SessionQuery,
  SessionStore,
  StoredMessage,
  StoredSession,
} from './session-store';
export { AgentTurn } from './agent-turn';
