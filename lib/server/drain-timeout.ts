/**
 * The default drain deadline, in a module of its own so that the command line's help text can
 * name it without loading a server.
 *
 * @packageDocumentation
 */

/** How long a draining server waits, by default, for its clients' requests in flight. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;
