/**
 * Typed handlers for what an ACP agent asks of its client: permissions and elicitations (v1 and
 * v2), and in v1 the client's file system and terminals.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { toDisposable, type Disposable } from '../support/disposable';
import { RpcError } from '../jsonrpc/errors';
import type { Responder } from '../requests/responder';
import {
  ELICITATION_COMPLETE_METHOD,
  ELICITATION_CREATE_METHOD,
  FS_READ_TEXT_FILE_METHOD,
  FS_WRITE_TEXT_FILE_METHOD,
  SESSION_REQUEST_PERMISSION_METHOD,
  TERMINAL_METHODS,
} from './methods';
import type { AcpVersion } from './negotiation';
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';

/** What every client handler receives beside the agent's params. */
export interface ClientRequestContext {
  /** The negotiated protocol version, when `initialize` went through an `AcpClient`. */
  readonly version: AcpVersion | undefined;
  /**
   * Aborts when the agent cancels the request (`$/cancel_request`), the connection closes, or —
   * for a permission — the client cancels the session's turn.
   */
  readonly signal: AbortSignal;
}

/**
 * Answers one kind of request from the agent: returns (or resolves with) the result, or throws to
 * answer with an error (an `RpcError` as is, anything else `-32603`).
 */
export type ClientRequestHandler<P, R> = (params: P, context: ClientRequestContext) => R | Promise<R>;

/** ACP v1's terminal requests; give all five to advertise the `terminal` capability. */
export interface TerminalHandlers {
  /** `terminal/create`: starts the command and answers its `terminalId`. */
  create: ClientRequestHandler<V1.CreateTerminalRequest, V1.CreateTerminalResponse>;
  /** `terminal/output`: answers the output so far, and the exit status once the command exited. */
  output: ClientRequestHandler<V1.TerminalOutputRequest, V1.TerminalOutputResponse>;
  /** `terminal/wait_for_exit`: resolves when the command exits, with its exit status. */
  waitForExit: ClientRequestHandler<V1.WaitForTerminalExitRequest, V1.WaitForTerminalExitResponse>;
  /** `undefined` answers `{}`. */
  kill: ClientRequestHandler<V1.KillTerminalRequest, V1.KillTerminalResponse | void>;
  /** `undefined` answers `{}`. */
  release: ClientRequestHandler<V1.ReleaseTerminalRequest, V1.ReleaseTerminalResponse | void>;
}

/**
 * What an `AcpClient` answers when the agent asks. A handler returns (or resolves) the result;
 * a throw answers with the error (an `RpcError` as is, anything else `-32603`).
 */
export interface AcpClientHandlers {
  /**
   * `session/request_permission` (v1 and v2). When the agent cancels the request, or the client
   * cancels the session's turn, the client answers `{outcome: {outcome: "cancelled"}}` at once
   * (as ACP requires) and the handler's later answer is dropped.
   */
  requestPermission?: ClientRequestHandler<
    V1.RequestPermissionRequest | V2.RequestPermissionRequest,
    V1.RequestPermissionResponse | V2.RequestPermissionResponse
  >;
  /** ACP v1's `fs/read_text_file` and `fs/write_text_file` (each advertises its `fs` capability). */
  fs?: {
    /** `fs/read_text_file`: answers the file's text (the lines asked for, when `line`/`limit` are given). */
    readTextFile?: ClientRequestHandler<V1.ReadTextFileRequest, V1.ReadTextFileResponse>;
    /** `undefined` answers `{}`. */
    writeTextFile?: ClientRequestHandler<V1.WriteTextFileRequest, V1.WriteTextFileResponse | void>;
  };
  /** ACP v1's `terminal/*` requests. */
  terminal?: TerminalHandlers;
  /**
   * `elicitation/create` (v1 and v2): asks the user for structured input, by a form or a URL.
   * Advertises the `elicitation` capability with both modes; answer `{action: "decline"}` for a
   * mode you do not offer.
   */
  elicit?: ClientRequestHandler<
    V1.CreateElicitationRequest | V2.CreateElicitationRequest,
    V1.CreateElicitationResponse | V2.CreateElicitationResponse
  >;
  /** The `elicitation/complete` notification: a URL elicitation the agent was waiting for completed. */
  onElicitationComplete?: (params: V1.CompleteElicitationNotification | V2.CompleteElicitationNotification) => void;
}

/** The v1 `clientCapabilities` that a set of handlers supports. */
export function clientCapabilitiesOf(handlers: readonly AcpClientHandlers[]): V1.ClientCapabilities {
  const has = (pick: (handlers: AcpClientHandlers) => unknown): boolean => handlers.some((h) => typeof pick(h) === 'function');
  const capabilities: V1.ClientCapabilities = {
    fs: { readTextFile: has((h) => h.fs?.readTextFile), writeTextFile: has((h) => h.fs?.writeTextFile) },
    terminal: handlers.some((h) => h.terminal !== undefined),
  };
  if (has((h) => h.elicit)) capabilities.elicitation = { form: {}, url: {} };
  return capabilities;
}

/** The v2 `capabilities` that a set of handlers supports (permissions need none). */
export function clientV2CapabilitiesOf(handlers: readonly AcpClientHandlers[]): V2.ClientCapabilities {
  return handlers.some((h) => typeof h.elicit === 'function') ? { elicitation: { form: {}, url: {} } } : {};
}

const CANCELLED_OUTCOME = Object.freeze({ outcome: Object.freeze({ outcome: 'cancelled' }) });

/** Pending permission requests by session, so that cancelling a turn answers them. @internal */
export class PermissionRequests {
  readonly #bySession = new Map<string, Set<() => void>>();

  /** Answers every pending permission request of `sessionId` `cancelled`. */
  cancel(sessionId: string): void {
    for (const cancel of [...(this.#bySession.get(sessionId) ?? [])]) cancel();
  }

  /** @internal */
  add(sessionId: string, cancel: () => void): () => void {
    let set = this.#bySession.get(sessionId);
    if (!set) this.#bySession.set(sessionId, (set = new Set()));
    set.add(cancel);
    return () => {
      set.delete(cancel);
      if (set.size === 0) this.#bySession.delete(sessionId);
    };
  }
}

/**
 * Registers `handlers` on `connection`; returns a disposable that removes them.
 *
 * @throws TypeError if a handler is not a function, or `terminal` lacks one of its five
 * @internal
 */
export function registerClientHandlers(
  connection: Connection,
  handlers: AcpClientHandlers,
  version: () => AcpVersion | undefined,
  permissions: PermissionRequests,
): Disposable {
  const registrations: Disposable[] = [];
  const on = <P, R>(method: string, handler: ClientRequestHandler<P, R> | undefined, empty = false): void => {
    if (handler === undefined) return;
    if (typeof handler !== 'function') throw new TypeError(`the handler of \`${method}\` must be a function`);
    registrations.push(
      connection.onRequest(method, async (params: P, responder) => {
        const value = await handler(params, { version: version(), signal: responder.signal });
        return value === undefined && empty ? {} : value;
      }),
    );
  };
  const { requestPermission, fs, terminal } = handlers;
  if (requestPermission !== undefined) {
    if (typeof requestPermission !== 'function') throw new TypeError('requestPermission must be a function');
    registrations.push(
      connection.onRequest(
        SESSION_REQUEST_PERMISSION_METHOD,
        (params: V1.RequestPermissionRequest | V2.RequestPermissionRequest, responder) =>
          askPermission(requestPermission, params, responder, version(), permissions),
      ),
    );
  }
  on(ELICITATION_CREATE_METHOD, handlers.elicit);
  const { onElicitationComplete } = handlers;
  if (onElicitationComplete !== undefined) {
    if (typeof onElicitationComplete !== 'function') throw new TypeError('onElicitationComplete must be a function');
    registrations.push(
      connection.onNotification(
        ELICITATION_COMPLETE_METHOD,
        (params: V1.CompleteElicitationNotification | V2.CompleteElicitationNotification) => onElicitationComplete(params),
      ),
    );
  }
  on(FS_READ_TEXT_FILE_METHOD, fs?.readTextFile);
  on(FS_WRITE_TEXT_FILE_METHOD, fs?.writeTextFile, true);
  if (terminal !== undefined) {
    for (const name of Object.keys(TERMINAL_METHODS) as (keyof TerminalHandlers)[]) {
      if (typeof terminal[name] !== 'function') throw new TypeError(`terminal.${name} must be a function`);
    }
    on(TERMINAL_METHODS.create, terminal.create);
    on(TERMINAL_METHODS.output, terminal.output);
    on(TERMINAL_METHODS.waitForExit, terminal.waitForExit);
    on(TERMINAL_METHODS.kill, terminal.kill, true);
    on(TERMINAL_METHODS.release, terminal.release, true);
  }
  return toDisposable(() => {
    for (const registration of registrations) registration.dispose();
  });
}

/** Runs a permission handler; a cancel (by the agent, or of the session's turn) answers `cancelled` at once. */
async function askPermission(
  handler: NonNullable<AcpClientHandlers['requestPermission']>,
  params: V1.RequestPermissionRequest | V2.RequestPermissionRequest,
  responder: Responder,
  version: AcpVersion | undefined,
  permissions: PermissionRequests,
): Promise<undefined> {
  const controller = new AbortController();
  const cancel = (): void => {
    if (!responder.hasResponded) responder.respond(CANCELLED_OUTCOME);
    controller.abort(RpcError.requestCancelled());
  };
  const onRequestAbort = (): void => {
    if (responder.isCancelled) cancel();
    else controller.abort(responder.signal.reason);
  };
  const requestSignal = responder.signal;
  requestSignal.addEventListener('abort', onRequestAbort);
  const sessionId = typeof params?.sessionId === 'string' ? params.sessionId : undefined;
  const undo = sessionId === undefined ? noop : permissions.add(sessionId, cancel);
  try {
    const value = await handler(params, { version, signal: controller.signal });
    if (!responder.hasResponded) responder.respond(value);
  } catch (thrown) {
    if (!responder.hasResponded) throw thrown;
  } finally {
    undo();
    requestSignal.removeEventListener('abort', onRequestAbort);
  }
  return undefined;
}

function noop(): void {}
