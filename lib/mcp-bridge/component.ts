/**
 * An {@link McpBridge} as an in-process component of a conductor's chain.
 *
 * @packageDocumentation
 */
import type { Connection } from '../connection/connection';
import { ProxyComponent } from '../chain/proxy';
import type { Logger } from '../support/logger';
import { createConnectionPair } from '../transports/pair';
import { McpBridge, type McpBridgeOptions } from './bridge';

/** Options of {@link mcpBridgeComponent}. */
export interface McpBridgeComponentOptions extends McpBridgeOptions {
  /** The component's name in the chain (logs, errors). Default `mcp-bridge`. */
  name?: string;
  /** The logger of the bridge's own end of the in-process connection. */
  logger?: Logger;
}

/** A bridge ready to put in a conductor's `components`, just before the agent. */
export interface McpBridgeComponent {
  /** What goes in `components`: the conductor's end of an in-process connection to the bridge. */
  readonly component: {
    /** The conductor's end of the connection. */
    readonly connection: Connection;
    /** The component's name. */
    readonly name: string;
  };
  /** The bridge (it closes its endpoint when the conductor closes the connection). */
  readonly bridge: McpBridge;
}

/**
 * Makes an {@link McpBridge} that runs in this process, on one end of an in-memory connection pair,
 * and gives the other end as a conductor component.
 *
 * @example
 * ```ts
 * const { component } = mcpBridgeComponent();
 * const conductor = new Conductor({ client: connectStdio(), components: [component, 'codex-acp'] });
 * ```
 */
export function mcpBridgeComponent(options: McpBridgeComponentOptions = {}): McpBridgeComponent {
  const { name = 'mcp-bridge', logger, ...bridgeOptions } = options;
  const [conductorEnd, bridgeEnd] = createConnectionPair({}, { name, ...(logger ? { logger } : {}) });
  const bridge = new McpBridge(new ProxyComponent(bridgeEnd), bridgeOptions);
  return { component: { connection: conductorEnd, name }, bridge };
}
