/**
 * Components named by a URL: an agent or a proxy already running elsewhere, reached over
 * WebSocket, Streamable HTTP or TCP instead of started as a child process.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { AcpWireError, describeThrown } from '../jsonrpc/errors';
import type { Logger } from '../support/logger';
import { connectUrl, isPeerUrl, type ConnectUrlOptions } from '../transports/url';
import { defaultComponentName, type ComponentSource } from './chain-component';

/** A component named by a URL could not be connected, so its chain could not be started. */
export class ComponentConnectionError extends AcpWireError {
  /** Always `'ComponentConnectionError'`. */
  override readonly name = 'ComponentConnectionError';
  readonly code = 'ACP_WIRE_COMPONENT_CONNECTION';
  /**
   * @param component - the component's name (`proxy1`, …, `agent`)
   * @param url - the URL it was to be reached at
   * @param options - `cause`: the transport's error (e.g. ECONNREFUSED, an `HttpStatusError`)
   */
  constructor(
    readonly component: string,
    readonly url: string,
    options?: ErrorOptions,
  ) {
    const cause = options?.cause;
    super(`${component} (${url}): ${cause instanceof Error ? cause.message : describeThrown(cause)}`, options);
  }
}

/** Whether a chain lists a component named by a URL (`ws://`, `wss://`, `http://`, `https://`, `tcp://`). @internal */
export function hasUrlComponent(sources: readonly ComponentSource[]): boolean {
  return sources.some((source) => typeof source === 'string' && isPeerUrl(source));
}

/**
 * Connects every component named by a URL, all at once; other components are returned as they are.
 * A connected component becomes `{ connection, name }` (named `proxy1`, …, `agent` by its place).
 *
 * @remarks If one connection fails, those already made (or made later) are closed.
 * @throws ComponentConnectionError naming the first component that could not be connected
 * @internal
 */
export async function connectUrlComponents(
  sources: readonly ComponentSource[],
  options: { urlOptions?: ConnectUrlOptions; logger?: (name: string) => Logger } = {},
): Promise<ComponentSource[]> {
  const last = sources.length - 1;
  const attempts = sources.map(async (source, index): Promise<ComponentSource> => {
    if (typeof source !== 'string' || !isPeerUrl(source)) return source;
    const name = defaultComponentName(index, index === last ? 'agent' : 'proxy');
    const logger = options.logger?.(name);
    try {
      const connection = await connectUrl(source, { ...options.urlOptions, name, ...(logger ? { logger } : {}) });
      return { connection, name };
    } catch (error) {
      throw new ComponentConnectionError(name, source, { cause: error });
    }
  });
  const settled = await Promise.allSettled(attempts);
  const failed = settled.find((result) => result.status === 'rejected');
  if (!failed) return settled.map((result) => (result as PromiseFulfilledResult<ComponentSource>).value);
  await closeUrlComponents(settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])));
  throw failed.reason;
}

/** Closes the connections of connected URL components (those given as `{ connection }`). @internal */
export async function closeUrlComponents(sources: readonly ComponentSource[]): Promise<void> {
  const connections = sources.flatMap((source) =>
    typeof source === 'object' && 'connection' in source ? [source.connection as Connection] : [],
  );
  await Promise.all(connections.map((connection) => connection.close()));
}
