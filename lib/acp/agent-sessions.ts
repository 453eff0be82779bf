/**
 * An {@link AcpAgent}'s session lifecycle: `session/new`, `session/list`, `session/resume`, v1
 * `session/load`, `session/close` and `session/delete`, over its session store and the sessions
 * open on its connection.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import type { Connection } from '../connection/connection';
import { ErrorCode, RpcError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/message';
import type { Responder } from '../requests/responder';
import type { AcpAgentOptions, AgentAttachSessionRequest, AgentContext, AgentNewSessionAnswer } from './agent-options';
import { isThenable, objectParams } from './agent-params';
import { AgentSession, type SessionHost } from './agent-session';
import type { SessionWorkspace } from './agent-turn';
import { SESSION_LOAD_METHOD } from './methods';
import type { AcpVersion } from './negotiation';
import { replayUpdates, type StoreWriter } from './session-history';
import type { SessionStore, StoredSession } from './session-store';

/** The default of {@link AcpAgentOptions.closeGraceMs}. */
const CLOSE_GRACE_MS = 5000;

/** What {@link AgentSessions} needs from its agent. @internal */
export interface SessionsHost {
  readonly connection: Connection;
  readonly options: AcpAgentOptions;
  readonly records: StoreWriter;
  /** The negotiated version. */
  version(): AcpVersion;
  /** The handler context of a request. */
  context(responder: Responder): AgentContext;
}

/** `-32002` "Resource not found" for a session this connection does not have open. @internal */
export function unknownSession(sessionId: string): RpcError {
  return new RpcError(ErrorCode.ResourceNotFound, 'Resource not found', { sessionId });
}

/**
 * The sessions of one agent connection: those open on it, and the store behind them.
 *
 * @internal
 */
export class AgentSessions {
  readonly #host: SessionsHost;
  readonly #open = new Map<string, AgentSession>();
  readonly #sessionHost: SessionHost;
  readonly #graceMs: number;

  constructor(host: SessionsHost) {
    this.#host = host;
    this.#sessionHost = {
      connection: host.connection,
      runTurn: (turn) => host.options.prompt(turn),
      records: host.records,
    };
    this.#graceMs = host.options.closeGraceMs ?? CLOSE_GRACE_MS;
  }

  get #store(): SessionStore {
    return this.#host.records.store;
  }

  /** The session open on this connection with this id, or `undefined`. */
  open(sessionId: string): AgentSession | undefined {
    return this.#open.get(sessionId);
  }

  /** The connection closed: every open session stops. */
  abandonAll(): void {
    for (const session of this.#open.values()) session.abandon(undefined);
    this.#open.clear();
  }

  /** `session/new`: the handler's answer, the session kept in the store and opened here. */
  newSession(params: unknown, responder: Responder): unknown {
    const object = objectParams(params);
    const cwd = absolutePath(object.cwd, 'cwd');
    const additionalDirectories = absolutePaths(object.additionalDirectories);
    const handler = this.#host.options.newSession;
    const answer = handler ? handler({ cwd, params: object }, this.#host.context(responder)) : {};
    const send = (value: AgentNewSessionAnswer | undefined): unknown => {
      if (value === undefined) return undefined;
      const sessionId = value.sessionId ?? randomUUID();
      if (typeof sessionId !== 'string') throw new TypeError('a newSession handler must answer a string sessionId');
      const stored: StoredSession = { sessionId, cwd, ...(additionalDirectories && { additionalDirectories }), updatedAt: now() };
      return then(this.#store.create(stored), () => {
        this.#openSession(sessionId, { cwd, additionalDirectories: additionalDirectories ?? [] });
        responder.respond({ ...value, sessionId });
      });
    };
    return isThenable(answer) ? Promise.resolve(answer).then(send) : send(answer);
  }

  /** `session/list`: a page of the store's sessions, in the schema's `SessionInfo` shape. */
  list(params: unknown): unknown {
    const object = params === undefined ? {} : objectParams(params);
    const cwd = object.cwd === undefined || object.cwd === null ? undefined : absolutePath(object.cwd, 'cwd');
    const cursor = object.cursor === undefined || object.cursor === null ? undefined : object.cursor;
    if (cursor !== undefined && typeof cursor !== 'string') throw RpcError.invalidParams('`cursor` must be a string');
    return then(this.#store.list({ cwd, cursor }), (page) => {
      const sessions = page.sessions.map(sessionInfo);
      return page.nextCursor === undefined ? { sessions } : { sessions, nextCursor: page.nextCursor };
    });
  }

  /** `session/resume` (either version) and v1 `session/load`: re-attaches a session here. */
  attach(method: AgentAttachSessionRequest['method'], params: unknown, responder: Responder): unknown {
    const object = objectParams(params);
    if (typeof object.sessionId !== 'string') throw RpcError.invalidParams('`sessionId` must be a string');
    const sessionId = object.sessionId;
    const cwd = absolutePath(object.cwd, 'cwd');
    const additionalDirectories = absolutePaths(object.additionalDirectories);
    const replay = method === SESSION_LOAD_METHOD || replaysFromStart(object.replayFrom);
    return then(this.#store.get(sessionId), (session) => {
      if (session && session.cwd !== cwd) throw RpcError.invalidParams(`\`cwd\` is not the session's working directory (${session.cwd})`);
      const handler = this.#host.options.attachSession;
      const request = { method, sessionId, cwd, session, params: object };
      const answer = handler ? handler(request, this.#host.context(responder)) : defaultAttach(session, sessionId);
      return then(answer, (value) => {
        if (value === undefined) return undefined;
        const stored: StoredSession = { sessionId, cwd, ...(additionalDirectories && { additionalDirectories }), updatedAt: now() };
        const kept = session
          ? this.#store.update(sessionId, additionalDirectories ? { additionalDirectories } : {})
          : this.#store.create(stored);
        const workspace = { cwd, additionalDirectories: additionalDirectories ?? session?.additionalDirectories ?? [] };
        return then(kept, () => this.#reattach(sessionId, workspace, replay, value, responder));
      });
    });
  }

  /** `session/close`: ends the session's work (its idle `cancelled` first), then answers `{}`. */
  close(params: unknown, responder: Responder): unknown {
    const sessionId = sessionIdOf(params);
    const session = this.#open.get(sessionId);
    if (!session) throw unknownSession(sessionId);
    return this.#closeOpen(session, params as JsonObject, responder).then(() => ({}));
  }

  /** `session/delete`: closes the session if it is open here, and forgets it (an unknown one too). */
  delete(params: unknown, responder: Responder): unknown {
    const sessionId = sessionIdOf(params);
    const session = this.#open.get(sessionId);
    const closed = session ? this.#closeOpen(session, params as JsonObject, responder) : undefined;
    return then(closed, () => then(this.#store.delete?.(sessionId), () => ({})));
  }

  #openSession(sessionId: string, workspace: SessionWorkspace): AgentSession {
    let session = this.#open.get(sessionId);
    if (!session) this.#open.set(sessionId, (session = new AgentSession(this.#sessionHost, sessionId, this.#host.version(), workspace)));
    else session.workspace = workspace;
    return session;
  }

  async #closeOpen(session: AgentSession, params: JsonObject, responder: Responder): Promise<void> {
    this.#open.delete(session.id);
    await session.close(this.#graceMs);
    await this.#host.options.closeSession?.({ sessionId: session.id, params }, this.#host.context(responder));
  }

  /** Opens the session here, replays its conversation when asked, sends its state (v2), answers. */
  #reattach(sessionId: string, workspace: SessionWorkspace, replay: boolean, result: JsonObject, responder: Responder): unknown {
    const history = replay ? this.#store.history(sessionId) : [];
    return then(history, (messages) => {
      const session = this.#openSession(sessionId, workspace);
      for (const update of replayUpdates(session.version, messages)) session.send(update);
      if (session.version === 2) session.send({ sessionUpdate: 'state_update', state: session.isRunning ? 'running' : 'idle' });
      responder.respond(result);
      return undefined;
    });
  }
}

/** Calls `next` with `value`, at once or once it resolves. */
function then<T, R>(value: T | PromiseLike<T>, next: (value: T) => R): R | Promise<Awaited<R>> {
  return isThenable(value) ? (Promise.resolve(value).then(next) as Promise<Awaited<R>>) : next(value as T);
}

function now(): string {
  return new Date().toISOString();
}

function defaultAttach(session: StoredSession | undefined, sessionId: string): JsonObject {
  if (!session) throw unknownSession(sessionId);
  return {};
}

function sessionIdOf(params: unknown): string {
  const { sessionId } = objectParams(params);
  if (typeof sessionId !== 'string') throw RpcError.invalidParams('`sessionId` must be a string');
  return sessionId;
}

function absolutePath(value: unknown, name: string): string {
  if (typeof value !== 'string') throw RpcError.invalidParams(`\`${name}\` must be a string`);
  if (!isAbsolute(value)) throw RpcError.invalidParams(`\`${name}\` must be an absolute path`);
  return value;
}

function absolutePaths(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw RpcError.invalidParams('`additionalDirectories` must be an array of absolute paths');
  const paths = value.map((path) => absolutePath(path, 'additionalDirectories'));
  return paths.length === 0 ? undefined : paths;
}

/** Whether a `replayFrom` asks for the whole conversation; `-32602` for one this agent cannot serve. */
function replaysFromStart(replayFrom: unknown): boolean {
  if (replayFrom === undefined || replayFrom === null) return false;
  if (typeof replayFrom === 'object' && (replayFrom as { type?: unknown }).type === 'start') return true;
  throw RpcError.invalidParams('`replayFrom` must be {"type":"start"} (the only replay cursor this agent serves)');
}

function sessionInfo(session: StoredSession): JsonObject {
  const info: JsonObject = { sessionId: session.sessionId, cwd: session.cwd };
  if (session.additionalDirectories?.length) info.additionalDirectories = [...session.additionalDirectories];
  if (session.title !== undefined) info.title = session.title;
  info.updatedAt = session.updatedAt;
  return info;
}
