/**
 * The params and results of `AcpClient`'s requests, in both ACP versions.
 *
 * @packageDocumentation
 */
import type { JsonObject } from '../jsonrpc/message';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';
import type { ContentBlock, Implementation, SessionUpdateParams } from './types';

/** `AcpClient.initialize()` params: all optional; other fields are sent as given. */
export interface ClientInitializeParams {
  /** The version offered. Default: the highest of the client's `protocolVersions`. */
  protocolVersion?: number;
  /** Default: the client's `info`. */
  info?: Implementation;
  /** ACP v2 `capabilities`. Default: what the registered handlers support (`elicitation` with `elicit`). */
  capabilities?: V2.ClientCapabilities;
  /** ACP v1 `clientCapabilities`. Default: what the registered handlers support. */
  clientCapabilities?: V1.ClientCapabilities;
  /** ACP's reserved extension metadata, sent as given; the agent must not assume anything about its keys. */
  _meta?: JsonObject;
  [field: string]: unknown;
}

/** The agent, as `initialize` described it, in the negotiated version. */
export type AgentInitialization = {
  /** The agent's name and version (v1 `agentInfo`, v2 `info`), when it sent one. */
  readonly info: Implementation | undefined;
} & (
  | {
      /** The negotiated version is 1: the other fields have v1 shapes. */
      readonly protocolVersion: 1;
      /** The v1 `agentCapabilities` (`{}` when the agent sent none). */
      readonly capabilities: V1.AgentCapabilities;
      /** The ways the agent accepts to `authenticate` (`[]` when it listed none). */
      readonly authMethods: V1.AuthMethod[];
      /** The whole `initialize` result, as received. */
      readonly result: V1.InitializeResponse;
    }
  | {
      /** The negotiated version is 2: the other fields have v2 shapes. */
      readonly protocolVersion: 2;
      /** The v2 `capabilities` (`{}` when the agent sent none). */
      readonly capabilities: V2.AgentCapabilities;
      /** The ways the agent accepts to `auth/login` (`[]` when it listed none). */
      readonly authMethods: V2.AuthMethod[];
      /** The whole `initialize` result, as received. */
      readonly result: V2.InitializeResponse;
    }
);

/** `session/new` params: `cwd` (an absolute path); `mcpServers` defaults to `[]`. */
export interface NewSessionParams {
  /** The session's working directory: an absolute path, on the agent's machine. */
  cwd: string;
  /** The MCP servers the agent should connect to for this session. Default `[]`. */
  mcpServers?: (V1.McpServer | V2.McpServer)[];
  [field: string]: unknown;
}

/** `session/list` params: both filters optional. */
export interface ListSessionsParams {
  /** Only sessions whose working directory is this absolute path. */
  cwd?: string;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  [field: string]: unknown;
}

/** `session/resume` and v1 `session/load` params: the session and its working directory. */
export interface ResumeSessionParams {
  /** The session to re-attach. */
  sessionId: string;
  /** Its working directory (the one it was made with): an absolute path. */
  cwd: string;
  /** The MCP servers for the session. Default `[]`. */
  mcpServers?: (V1.McpServer | V2.McpServer)[];
  /** v2: `{type: "start"}` replays the conversation before the answer; absent replays nothing. */
  replayFrom?: V2.ReplayFrom;
  [field: string]: unknown;
}

/** `session/set_config_option` params: the option and its new value. */
export interface SetConfigOptionParams {
  /** The session whose option changes. */
  sessionId: string;
  /** The option's id (`configId` of one of the session's `configOptions`). */
  configId: string;
  /** The new value: a value id, or a boolean with `type: "boolean"`. */
  value: unknown;
  [field: string]: unknown;
}

/** `session/prompt` params: the session and the prompt's content blocks (at least one). */
export interface PromptParams {
  /** The session the turn runs in (from `session/new`). */
  sessionId: string;
  /** The user's message: at least one content block. */
  prompt: ContentBlock[];
  /** ACP's reserved extension metadata, sent as given. */
  _meta?: JsonObject;
  [field: string]: unknown;
}

/** Receives `session/update` notifications. A throw is reported on the connection, not sent. */
export type SessionUpdateHandler = (params: SessionUpdateParams) => void;

/** Options of {@link AcpClient.onSessionUpdate}. */
export interface SessionUpdateOptions {
  /** Only deliver updates of this session. Default: every session. */
  sessionId?: string;
}
