/**
 * A passthrough ACP proxy with no library, the floor of `examples/passthrough-proxy.ts`: every
 * request from the conductor goes back to it inside a `proxy/successor` envelope
 * (`proxy/initialize` as `initialize`) under a new id, and the answer is returned under the
 * conductor's id. Enough for a chain's `initialize`; nothing else is handled.
 *
 * @packageDocumentation
 */
import { type RawMessage, readLines, writeLine } from './lines';

let nextId = 0;
const waiting = new Map<number, RawMessage['id']>();
readLines(process.stdin, (message) => {
  if (message.method !== undefined && message.id !== undefined) {
    const method = message.method === 'proxy/initialize' ? 'initialize' : message.method;
    waiting.set(nextId, message.id);
    writeLine(process.stdout, { id: nextId++, method: 'proxy/successor', params: { method, params: message.params } });
  } else if (message.method === undefined && typeof message.id === 'number' && waiting.has(message.id)) {
    const id = waiting.get(message.id);
    waiting.delete(message.id);
    writeLine(process.stdout, 'error' in message ? { id, error: message.error } : { id, result: message.result });
  }
});
