/**
 * What acp-wire's own modules may do to a connection beyond its public API: install the ACP
 * request gate, close it for a transport-level reason, hold its input while a relay is full.
 *
 * @packageDocumentation
 */
import type { DrainSource } from '../framing/backlog';
import type { CloseReason } from '../jsonrpc/errors';
import type { AnswerObserver } from '../requests/inbound-request';
import type { ErrorObject, RequestMessage } from '../jsonrpc/message';

/**
 * What a {@link RequestGate} decides for one request: `undefined` lets it through; `{ refuse }`
 * answers it with that error instead of dispatching it; `{ onAnswer }` lets it through and has the
 * request tell `onAnswer` once, when it is answered, whether the answer was an error.
 *
 * @internal
 */
export type GateVerdict = { readonly refuse: ErrorObject } | { readonly onAnswer: AnswerObserver } | undefined;

/** A hook that decides about each request before dispatch (the ACP `initialize` gate). @internal */
export type RequestGate = (message: RequestMessage) => GateVerdict;

/** The internal hooks a connection hands over when it is built. @internal */
export interface ConnectionHooks {
  setGate(gate: RequestGate): void;
  acceptBatches(accept: boolean): void;
  shutdown(reason: CloseReason, error?: Error): Promise<void>;
  holdInputWhileFull(relay: DrainSource): () => void;
  heldBytes(): number;
}

/**
 * Each connection's hooks, registered by its constructor. A module-level `WeakMap` (one entry per
 * connection, not per message) keeps them off the class's public surface, without a `static {}`
 * block that would expose the class's private fields to other modules.
 */
const hooksOf = new WeakMap<object, ConnectionHooks>();

/**
 * The hooks of `connection`.
 *
 * @throws TypeError when it was not built by this copy of acp-wire (e.g. an agent module that
 * imports its own copy of acp-wire, given a connection by another copy's `serve`)
 */
function hooksFor(connection: object): ConnectionHooks {
  const hooks = hooksOf.get(connection);
  if (!hooks)
    throw new TypeError('this Connection was not made by this copy of acp-wire: load acp-wire once (one version, one path) per process');
  return hooks;
}

/** Called once by each connection's constructor. @internal */
export function registerConnectionHooks(connection: object, hooks: ConnectionHooks): void {
  hooksOf.set(connection, hooks);
}

/** Installs the request gate of the ACP layer on `connection`. @internal */
export function setRequestGate(connection: object, gate: RequestGate): void {
  hooksFor(connection).setGate(gate);
}

/**
 * Makes `connection` answer JSON-RPC 2.0 batches (`true`) or refuse them with one `-32600`
 * (`false`), as its `batches` option does: the ACP layer turns them on once ACP v2 is negotiated.
 * @internal
 */
export function acceptBatches(connection: object, accept: boolean): void {
  hooksFor(connection).acceptBatches(accept);
}

/** Closes `connection` for a transport-level reason (e.g. the peer process exited). @internal */
export function closeConnection(connection: object, reason: CloseReason, error?: Error): Promise<void> {
  return hooksFor(connection).shutdown(reason, error);
}

/**
 * Makes `from` hold its incoming messages (reading on up to its backlog limit, then pausing its
 * input) while `relay`'s output needs drain. Returns the undo. @internal
 */
export function holdInputWhileFull(from: object, relay: DrainSource): () => void {
  return hooksFor(from).holdInputWhileFull(relay);
}

/** Characters of the messages `connection` has read and holds back now (for tests and debugging). @internal */
export function heldInputBytes(connection: object): number {
  return hooksFor(connection).heldBytes();
}
