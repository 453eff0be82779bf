/**
 * A server command's drain on SIGTERM (`serve`, `conduct --listen`): new clients are refused, each
 * client is closed once it has nothing in flight, the rest are cut at the deadline.
 *
 * @packageDocumentation
 */
import type { DrainResult } from '../server/client-pool';
import { report } from './subcommand';

/** The exit code after a SIGTERM drain that had to cut clients still in a request at its deadline. */
export const EXIT_DRAIN_CUT = 3;

/** What can be drained: a `ClientPool`, or a listener's `drain`. */
export interface Drainable {
  drain(options: { timeoutMs: number }): Promise<DrainResult>;
}

/**
 * Drains `server`'s clients within `timeoutMs`; reports on stderr how many were cut, if any, and
 * returns that count.
 */
export async function drainClients(command: string, server: Drainable, timeoutMs: number): Promise<number> {
  const { clients, cut } = await server.drain({ timeoutMs });
  if (cut > 0)
    report(
      command,
      `drained ${clients} client${clients === 1 ? '' : 's'}: cut ${cut} still in a request at the drain deadline (${timeoutMs} ms)`,
    );
  return cut;
}
