/**
 * A session's conversation as an {@link AcpAgent} keeps it: the messages a turn sends, gathered
 * whole, written to the session store, and replayed by `session/resume` and `session/load`.
 *
 * @packageDocumentation
 */
import { describeThrown } from '../jsonrpc/errors';
import type { Logger } from '../support/logger';
import type { AcpVersion } from './negotiation';
import type { SessionChanges, SessionStore, StoredMessage } from './session-store';
import type { ContentBlock, SessionUpdate } from './types';

/** The `sessionUpdate` kinds of whole messages and their chunks, by role. */
const KINDS = {
  user: { whole: 'user_message', chunk: 'user_message_chunk' },
  agent: { whole: 'agent_message', chunk: 'agent_message_chunk' },
  thought: { whole: 'agent_thought', chunk: 'agent_thought_chunk' },
} as const;

type Role = StoredMessage['role'];

const ROLE_OF_KIND = new Map<string, { role: Role; isChunk: boolean }>(
  Object.entries(KINDS).flatMap(([role, kinds]) => [
    [kinds.whole, { role: role as Role, isChunk: false }],
    [kinds.chunk, { role: role as Role, isChunk: true }],
  ]),
);

/**
 * Gathers the messages of one turn from the updates it sends: chunks appended, whole-message
 * updates replacing, adjacent plain text joined.
 *
 * @internal
 */
export class MessageCollector {
  readonly #messages = new Map<string, { role: Role; content: ContentBlock[] }>();
  readonly #defaultIds: Readonly<Record<Role, string>>;

  /** @param defaultIds - the message id of each role for updates that carry none (ACP v1) */
  constructor(defaultIds: Readonly<Record<Role, string>>) {
    this.#defaultIds = defaultIds;
  }

  /** Takes one update the turn sent; updates that are not messages are ignored. */
  take(update: SessionUpdate): void {
    const kind = ROLE_OF_KIND.get(update.sessionUpdate);
    if (!kind) return;
    const fields = update as { messageId?: unknown; content?: unknown };
    const messageId = typeof fields.messageId === 'string' ? fields.messageId : this.#defaultIds[kind.role];
    let message = this.#messages.get(messageId);
    if (!message) this.#messages.set(messageId, (message = { role: kind.role, content: [] }));
    if (!kind.isChunk) message.content = [];
    const blocks = kind.isChunk ? [fields.content] : Array.isArray(fields.content) ? fields.content : [];
    for (const block of blocks) if (isBlock(block)) appendBlock(message.content, block);
  }

  /** The messages gathered, in the order each was first sent; empty ones left out. */
  messages(): StoredMessage[] {
    return [...this.#messages].filter(([, m]) => m.content.length > 0).map(([messageId, m]) => ({ messageId, ...m }));
  }
}

/**
 * The `session/update`s that replay a conversation: v2 whole messages (`user_message`,
 * `agent_message`, `agent_thought` with their ids), v1 one chunk per content block.
 *
 * @internal
 */
export function replayUpdates(version: AcpVersion, messages: readonly StoredMessage[]): SessionUpdate[] {
  if (version === 2) {
    return messages.map(
      ({ role, messageId, content }) => ({ sessionUpdate: KINDS[role].whole, messageId, content: [...content] }) as SessionUpdate,
    );
  }
  return messages.flatMap(({ role, content }) =>
    content.map((block) => ({ sessionUpdate: KINDS[role].chunk, content: block }) as SessionUpdate),
  );
}

/**
 * Writes to a session store from the agent's paths that answer nothing (a turn's end): a store that
 * throws or rejects is logged, never fatal.
 *
 * @internal
 */
export class StoreWriter {
  constructor(
    readonly store: SessionStore,
    readonly logger: Logger,
  ) {}

  /** Adds messages to a session's conversation, in order (each after the previous one settled). */
  append(sessionId: string, messages: readonly StoredMessage[]): void {
    const from = (index: number): unknown => {
      for (let i = index; i < messages.length; i++) {
        const written = this.store.append(sessionId, messages[i]!);
        if (written instanceof Promise) return written.then(() => from(i + 1));
      }
      return undefined;
    };
    this.#watch(this.#call(() => from(0)));
  }

  /** Changes a session's record. */
  update(sessionId: string, changes: SessionChanges): void {
    this.#watch(this.#call(() => this.store.update(sessionId, changes)));
  }

  #call(fn: () => unknown): unknown {
    try {
      return fn();
    } catch (error) {
      this.#failed(error);
      return undefined;
    }
  }

  #watch(result: unknown): void {
    if (result instanceof Promise) result.catch((error: unknown) => this.#failed(error));
  }

  #failed(error: unknown): void {
    this.logger.log('warn', `the session store failed: ${describeThrown(error)}`);
  }
}

function isBlock(value: unknown): value is ContentBlock {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** Appends `block`, joining it to a plain text block just before it. */
function appendBlock(content: ContentBlock[], block: ContentBlock): void {
  const last = content[content.length - 1];
  if (last && isPlainText(last) && isPlainText(block)) {
    content[content.length - 1] = { type: 'text', text: last.text + block.text };
  } else {
    content.push(block);
  }
}

function isPlainText(block: ContentBlock): block is ContentBlock & { type: 'text'; text: string } {
  if (block.type !== 'text') return false;
  const keys = Object.keys(block);
  return typeof (block as { text?: unknown }).text === 'string' && keys.every((key) => key === 'type' || key === 'text');
}
