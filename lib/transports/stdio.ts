/**
 * The current process's own stdin/stdout as a connection (for agents and proxies).
 *
 * @packageDocumentation
 */
import { Connection, type ConnectionOptions } from '../connection/connection';

/**
 * Connects over this process's stdin (input) and stdout (output).
 *
 * @remarks
 * Nothing but protocol lines may go to stdout: log to stderr. Closing the connection (or stdin
 * ending) stops reading stdin so the process can exit once its own work is done; stdout is flushed,
 * not ended.
 *
 * @example
 * ```ts
 * const connection = connectStdio();
 * connection.onRequest('initialize', () => ({ protocolVersion: 2 }));
 * ```
 */
export function connectStdio(options: ConnectionOptions = {}): Connection {
  const connection = new Connection(process.stdin, process.stdout, { ...options, endOutputOnClose: false });
  connection.once('close', () => {
    process.stdin.pause();
    process.stdin.unref?.();
  });
  return connection;
}
