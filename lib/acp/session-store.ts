/**
 * Where an {@link AcpAgent} keeps its sessions: what `session/list` reports, what `session/resume`
 * and `session/load` find, and each session's conversation to replay. One interface, and an
 * in-memory store that is the default.
 *
 * @packageDocumentation
 */
import { RpcError } from '../jsonrpc/errors';
import type { ContentBlock } from './types';

/** A session as a {@link SessionStore} keeps it: the fields of the schema's `SessionInfo`. */
export interface StoredSession {
  /** The session's id. */
  readonly sessionId: string;
  /** Its working directory: an absolute path. */
  readonly cwd: string;
  /** Further workspace roots (absolute paths), when the client gave any. */
  readonly additionalDirectories?: readonly string[];
  /** A human-readable title, once the agent gave one (a `session_info_update`). */
  readonly title?: string;
  /** When it was last active: an RFC 3339 timestamp. */
  readonly updatedAt: string;
}

/** What may change on a stored session. */
export type SessionChanges = Partial<Pick<StoredSession, 'title' | 'updatedAt' | 'additionalDirectories'>>;

/** One message of a session's conversation, whole: what a resume replays. */
export interface StoredMessage {
  /** Who said it: the user, the agent, or the agent's thinking. */
  readonly role: 'user' | 'agent' | 'thought';
  /** The message's id (ACP v2 `messageId`). */
  readonly messageId: string;
  /** Its content blocks, in order. */
  readonly content: readonly ContentBlock[];
}

/** A `session/list` query: both fields optional. */
export interface SessionQuery {
  /** Only sessions whose `cwd` is exactly this. */
  readonly cwd?: string;
  /** Where to continue: a `nextCursor` from an earlier page. */
  readonly cursor?: string;
}

/** One page of `session/list`. */
export interface SessionPage {
  /** The sessions of this page, most recently active first. */
  readonly sessions: readonly StoredSession[];
  /** The cursor of the next page, absent on the last one. */
  readonly nextCursor?: string;
}

/**
 * Keeps an agent's sessions. Every method may return a promise (a store backed by a database);
 * {@link MemorySessionStore} answers at once.
 *
 * @remarks The agent calls `create` for each `session/new`, `get` for `session/resume` and
 * `session/load`, `update` as sessions are used, `list` for `session/list`, `append` once per
 * whole message and `history` for a replay. `delete` is optional: the agent serves (and
 * advertises) `session/delete` only when the store has it. A store that keeps no history may
 * answer `history` with `[]`: resuming then replays nothing, which ACP allows.
 */
export interface SessionStore {
  /** Keeps a new session. */
  create(session: StoredSession): void | Promise<void>;
  /** The session with this id, or `undefined`. */
  get(sessionId: string): StoredSession | undefined | Promise<StoredSession | undefined>;
  /** Changes a kept session; an unknown id is ignored. */
  update(sessionId: string, changes: SessionChanges): void | Promise<void>;
  /**
   * A page of sessions, most recently active first.
   *
   * @throws RpcError `-32602` for a cursor it did not make
   */
  list(query: SessionQuery): SessionPage | Promise<SessionPage>;
  /** Adds one whole message to a session's conversation; an unknown id is ignored. */
  append(sessionId: string, message: StoredMessage): void | Promise<void>;
  /** The session's conversation, oldest first (`[]` when it keeps none). */
  history(sessionId: string): readonly StoredMessage[] | Promise<readonly StoredMessage[]>;
  /** Forgets a session and its conversation; an unknown id is ignored. Optional. */
  delete?(sessionId: string): void | Promise<void>;
}

/** Options of a {@link MemorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** Sessions kept; past it, the least recently active is forgotten. Default 1,000. */
  maxSessions?: number;
  /** Messages kept per session; past it, the oldest are forgotten. Default 1,000. */
  maxMessages?: number;
  /** Sessions per `session/list` page. Default 50. */
  pageSize?: number;
}

interface Entry {
  session: StoredSession;
  readonly messages: StoredMessage[];
}

/**
 * Sessions and their conversations in this process's memory: the default store of an
 * {@link AcpAgent}. Share one instance between agents (e.g. the instances of an agent module that
 * `acp-wire serve` hosts) to let a client resume a session on another connection.
 *
 * @remarks Bounded: {@link MemorySessionStoreOptions}. Pages are ordered by `updatedAt` (newest
 * first), then by id; a cursor names the last session of its page, so sessions made or changed
 * meanwhile neither repeat nor hide the others.
 */
export class MemorySessionStore implements SessionStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxSessions: number;
  readonly #maxMessages: number;
  readonly #pageSize: number;

  /** @throws RangeError for an option that is not a positive integer */
  constructor(options: MemorySessionStoreOptions = {}) {
    this.#maxSessions = positive(options.maxSessions ?? 1000, 'maxSessions');
    this.#maxMessages = positive(options.maxMessages ?? 1000, 'maxMessages');
    this.#pageSize = positive(options.pageSize ?? 50, 'pageSize');
  }

  /** Sessions kept now. */
  get size(): number {
    return this.#entries.size;
  }

  create(session: StoredSession): void {
    this.#entries.delete(session.sessionId);
    this.#entries.set(session.sessionId, { session: { ...session }, messages: [] });
    if (this.#entries.size > this.#maxSessions) this.#forgetLeastRecent();
  }

  get(sessionId: string): StoredSession | undefined {
    return this.#entries.get(sessionId)?.session;
  }

  update(sessionId: string, changes: SessionChanges): void {
    const entry = this.#entries.get(sessionId);
    if (entry) entry.session = { ...entry.session, ...changes };
  }

  list(query: SessionQuery): SessionPage {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const matching = [...this.#entries.values()]
      .map((entry) => entry.session)
      .filter((session) => query.cwd === undefined || session.cwd === query.cwd)
      .sort(newestFirst);
    const start = after === undefined ? 0 : matching.findIndex((session) => newestFirst(session, after) > 0);
    const from = start === -1 ? matching.length : start;
    const sessions = matching.slice(from, from + this.#pageSize);
    const last = sessions[sessions.length - 1];
    return from + sessions.length < matching.length && last ? { sessions, nextCursor: encodeCursor(last) } : { sessions };
  }

  append(sessionId: string, message: StoredMessage): void {
    const messages = this.#entries.get(sessionId)?.messages;
    if (!messages) return;
    messages.push(message);
    if (messages.length > this.#maxMessages) messages.splice(0, messages.length - this.#maxMessages);
  }

  history(sessionId: string): readonly StoredMessage[] {
    return [...(this.#entries.get(sessionId)?.messages ?? [])];
  }

  delete(sessionId: string): void {
    this.#entries.delete(sessionId);
  }

  #forgetLeastRecent(): void {
    let oldest: StoredSession | undefined;
    for (const { session } of this.#entries.values()) if (!oldest || newestFirst(session, oldest) > 0) oldest = session;
    if (oldest) this.#entries.delete(oldest.sessionId);
  }
}

/** The order of a page: newest `updatedAt` first, then by id. */
function newestFirst(a: Pick<StoredSession, 'updatedAt' | 'sessionId'>, b: Pick<StoredSession, 'updatedAt' | 'sessionId'>): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
}

function encodeCursor(session: StoredSession): string {
  return Buffer.from(JSON.stringify([session.updatedAt, session.sessionId])).toString('base64url');
}

function decodeCursor(cursor: string): Pick<StoredSession, 'updatedAt' | 'sessionId'> {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { updatedAt: value[0], sessionId: value[1] };
    }
  } catch {
    // Not one of ours: refused below.
  }
  throw RpcError.invalidParams('`cursor` is not a cursor this agent gave');
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
