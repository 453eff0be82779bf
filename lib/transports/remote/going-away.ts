/**
 * How a client stream reports that its server ended the connection to send it elsewhere, without
 * losing what it had already received.
 *
 * @packageDocumentation
 */
import type { Duplex } from 'node:stream';

/**
 * Destroys `stream` with `error` once its reader has taken everything pushed before (at once when
 * nothing waits): the server's last messages (a turn's answer written before a drain closed the
 * connection) are still delivered, then the connection closes with `error` as its cause.
 *
 * @internal
 */
export function destroyAfterRead(stream: Duplex, error: Error): void {
  if (stream.destroyed) return;
  if (stream.readableLength === 0) return void stream.destroy(error);
  const onData = (): void => {
    if (stream.readableLength > 0) return;
    stream.removeListener('data', onData);
    stream.destroy(error);
  };
  stream.on('data', onData);
}
