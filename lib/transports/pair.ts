/**
 * Two connections joined in memory, for tests and in-process components.
 *
 * @packageDocumentation
 */
import { PassThrough } from 'node:stream';
import { Connection, type ConnectionOptions } from '../connection/connection';

/**
 * Creates two connected {@link Connection}s over in-memory streams: what one sends, the other
 * receives, byte for byte as on a real transport.
 *
 * @example
 * ```ts
 * const [client, agent] = createConnectionPair();
 * agent.onRequest('ping', () => 'pong');
 * await client.sendRequest('ping'); // 'pong'
 * ```
 */
export function createConnectionPair(options: ConnectionOptions = {}, otherOptions: ConnectionOptions = options): [Connection, Connection] {
  const aToB = new PassThrough();
  const bToA = new PassThrough();
  return [new Connection(bToA, aToB, options), new Connection(aToB, bToA, otherOptions)];
}
