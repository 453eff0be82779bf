/**
 * The defaults of a conductor listener's bounds, in a module of their own so that the command
 * line's help text can name them without loading the listener and its network transports.
 *
 * @packageDocumentation
 */
import type { ConductorListenerOptions } from './conductor-listener';

/** The default {@link ConductorListenerOptions.maxChains}. */
export const DEFAULT_MAX_CHAINS = 16;
/** The default {@link ConductorListenerOptions.idleTimeoutMs}: five minutes. */
export const DEFAULT_CHAIN_IDLE_TIMEOUT_MS = 300_000;
