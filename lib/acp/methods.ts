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
