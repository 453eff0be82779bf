/**
 * ACP method names above the transport (sessions, authentication, the client's file system and
 * terminals), as sent on the wire in ACP v1 and v2.
 *
 * @packageDocumentation
 */

/** `session/new` (both versions). */
export const SESSION_NEW_METHOD = 'session/new';

/** `session/prompt` (both versions): v1 answers at the end of the turn, v2 once the prompt is inserted. */
export const SESSION_PROMPT_METHOD = 'session/prompt';

/** The `session/cancel` notification (both versions): stops a session's running turn. */
export const SESSION_CANCEL_METHOD = 'session/cancel';

/** The `session/update` notification, sent by the agent (both versions). */
export const SESSION_UPDATE_METHOD = 'session/update';

/** `session/request_permission`, sent by the agent (both versions). */
export const SESSION_REQUEST_PERMISSION_METHOD = 'session/request_permission';

/** ACP v1's `authenticate`. */
export const AUTHENTICATE_METHOD = 'authenticate';

/** ACP v2's `auth/login` (v1's `authenticate`). */
export const AUTH_LOGIN_METHOD = 'auth/login';

/** ACP v1's `fs/read_text_file`, sent by the agent. */
export const FS_READ_TEXT_FILE_METHOD = 'fs/read_text_file';

/** ACP v1's `fs/write_text_file`, sent by the agent. */
export const FS_WRITE_TEXT_FILE_METHOD = 'fs/write_text_file';

/** ACP v1's `terminal/*` requests, sent by the agent. */
export const TERMINAL_METHODS = Object.freeze({
  /** Starts a command in a new terminal; answered with its `terminalId`. */
  create: 'terminal/create',
  /** Asks for the output so far (and the exit status, once the command has exited). */
  output: 'terminal/output',
  /** Answered when the command exits, with its exit code or signal. */
  waitForExit: 'terminal/wait_for_exit',
  /** Kills the command; the terminal stays until released. */
  kill: 'terminal/kill',
  /** Kills the command if still running and frees the terminal; its id is then invalid. */
  release: 'terminal/release',
} as const);

/** ACP v1's `session/load`: re-attaches an existing session, replaying its history first (agent capability `loadSession`). */
export const SESSION_LOAD_METHOD = 'session/load';

/** `session/resume`: re-attaches an existing session (ACP v2 baseline; ACP v1 `sessionCapabilities.resume`). */
export const SESSION_RESUME_METHOD = 'session/resume';

/** `session/close`: ends a session at the agent (ACP v2 baseline; ACP v1 `sessionCapabilities.close`). */
export const SESSION_CLOSE_METHOD = 'session/close';

/** `session/list`: the sessions the agent knows (ACP v2 baseline; ACP v1 `sessionCapabilities.list`). */
export const SESSION_LIST_METHOD = 'session/list';

/** `session/delete`: forgets a session (capability `session.delete` in v2, `sessionCapabilities.delete` in v1). */
export const SESSION_DELETE_METHOD = 'session/delete';

/** `session/set_config_option`: sets one of a session's config options (both versions). */
export const SESSION_SET_CONFIG_OPTION_METHOD = 'session/set_config_option';

/** ACP v1's `session/set_mode` (v2 has config options instead). */
export const SESSION_SET_MODE_METHOD = 'session/set_mode';

/** ACP v1's `logout` (capability `auth.logout`). */
export const LOGOUT_METHOD = 'logout';

/** ACP v2's `auth/logout` (served whenever `authMethods` is not empty). */
export const AUTH_LOGOUT_METHOD = 'auth/logout';

/** ACP v2's `tool_call/cancel`: cancels one tool call that advertises `capabilities.cancel`. */
export const TOOL_CALL_CANCEL_METHOD = 'tool_call/cancel';

/** ACP v2's `terminal/cancel`: cancels one terminal that advertises `capabilities.cancel`. */
export const TERMINAL_CANCEL_METHOD = 'terminal/cancel';

/** `elicitation/create`, sent by the agent: asks the user for structured input (both versions). */
export const ELICITATION_CREATE_METHOD = 'elicitation/create';

/** The `elicitation/complete` notification, sent by the agent when a URL elicitation completes. */
export const ELICITATION_COMPLETE_METHOD = 'elicitation/complete';
