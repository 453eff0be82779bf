/**
 * `acp-wire/transports`: the local transports: child-process stdio, process stdio, TCP, the
 * in-memory pair, and `connectUrl` (which loads the remote transports only for a `ws://` or
 * `http://` URL). The same classes and functions as the root `acp-wire` exports under the same
 * names; importing this entry loads only these modules and what they use.
 *
 * @packageDocumentation
 */
export { createConnectionPair } from './pair';
export { connectStdio } from './stdio';
export { spawnConnection } from './child-process';
export type { ChildConnection, ChildExit, SpawnConnectionOptions } from './child-process';
export { DEFAULT_MAX_CONNECTIONS, connectTcp, listenTcp, socketConnection } from './tcp';
export type { TcpAddress, TcpListenOptions, TcpListener } from './tcp';
export { connectUrl, isPeerUrl } from './url';
export type { ConnectUrlOptions } from './url';
