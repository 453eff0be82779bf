/**
 * The few parts of a JSON-RPC message a remote transport looks at to route it (which stream, which
 * session, which answer), read without the connection's decoder.
 *
 * @packageDocumentation
 */
import type { RequestId } from '../../jsonrpc/message';

/** The parts of a JSON-RPC message the routing looks at. */
export interface RoutedMessage {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
  readonly result?: unknown;
}

/** Parses one line as an object, or `undefined` when it is not a JSON object. */
export function parseRouted(line: string): RoutedMessage | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as RoutedMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** `params.sessionId` when it is a string. */
export function sessionIdOf(message: RoutedMessage): string | undefined {
  const params = message.params as { sessionId?: unknown } | undefined;
  return typeof params === 'object' && params !== null && typeof params.sessionId === 'string' ? params.sessionId : undefined;
}

/** `result.sessionId` of a response (e.g. `session/new`), when it is a string. */
export function resultSessionIdOf(message: RoutedMessage): string | undefined {
  const result = message.result as { sessionId?: unknown } | undefined;
  return typeof result === 'object' && result !== null && typeof result.sessionId === 'string' ? result.sessionId : undefined;
}

/** A map key for a request id that keeps `1` and `"1"` apart; `undefined` for an invalid id. */
export function idKey(id: unknown): string | undefined {
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number') return `n:${id}`;
  if (id === null) return 'null';
  return undefined;
}

/** Whether the message is a request (has both `method` and `id`). */
export function isRequest(message: RoutedMessage): message is RoutedMessage & { method: string; id: RequestId } {
  return typeof message.method === 'string' && 'id' in message;
}

/** Whether the message is a response (an `id`, no `method`). */
export function isResponse(message: RoutedMessage): boolean {
  return message.method === undefined && 'id' in message;
}
