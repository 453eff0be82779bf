/**
 * The defaults of a conductor listener's bounds, in a module of their own so that the command
 * line's help text can name them without loading the listener and its network transports.
 *
 * @packageDocumentation
 */

/** The default `maxChains` of a conductor listener (`ConductorListenerOptions`). */
export const DEFAULT_MAX_CHAINS = 16;
/** The default `idleTimeoutMs` of a conductor listener (`ConductorListenerOptions`): five minutes. */
export const DEFAULT_CHAIN_IDLE_TIMEOUT_MS = 300_000;
