/**
 * Version-neutral names for the ACP protocol types both versions share in spirit, built from the
 * generated v1 and v2 types (lib/acp/schema/).
 *
 * @packageDocumentation
 */
import type * as V1 from './schema/v1';
import type * as V2 from './schema/v2';

/** A name and version (v1 `clientInfo`/`agentInfo`, v2 `info`); the same shape in both versions. */
export type Implementation = V1.Implementation | V2.Implementation;

/** One content block of a prompt or a message, in either version. */
export type ContentBlock = V1.ContentBlock | V2.ContentBlock;

/** One `session/update`'s `update`, in either version (`sessionUpdate` names its kind). */
export type SessionUpdate = V1.SessionUpdate | V2.SessionUpdate;

/** The params of a `session/update` notification, in either version. */
export type SessionUpdateParams = V1.SessionNotification | V2.UpdateSessionNotification;

/**
 * Why a prompt turn ended: v1's `PromptResponse.stopReason`, or the `stopReason` of v2's idle
 * `state_update` (which adds `error` and allows others).
 */
export type StopReason = V1.StopReason | 'error' | (string & {});

/** The update variants of either version whose `sessionUpdate` is `K`. */
export type SessionUpdateOf<K extends string> = Extract<
  SessionUpdate,
  {
    /** The variants kept: those whose `sessionUpdate` is `K`. */
    sessionUpdate: K;
  }
>;

/**
 * Whether `update` is of kind `kind`, narrowing it to that variant's type.
 *
 * @remarks The schemas also allow variants they do not know (any other `sessionUpdate` string),
 * which keeps a plain `update.sessionUpdate === 'agent_message_chunk'` check from narrowing.
 * @example
 * ```ts
 * for await (const update of turn) {
 *   if (isSessionUpdateKind(update, 'agent_message_chunk') && update.content.type === 'text') process.stdout.write(update.content.text);
 * }
 * ```
 */
export function isSessionUpdateKind<K extends string>(update: SessionUpdate, kind: K): update is SessionUpdateOf<K> {
  return update.sessionUpdate === kind;
}
