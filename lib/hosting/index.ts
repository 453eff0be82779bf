/**
 * `acp-wire/server`: what a server of many clients is built from, whatever the transport:
 * `ClientPool` (clients at once, idle timeout, draining), the work probes a drain waits on, which
 * hosts only this machine reaches, and the `AgentFactory` an agent module for
 * `acp-wire serve --agent-module` exports.
 *
 * @packageDocumentation
 * @module server
 */
export { ClientPool, ClientRefusedError, PooledClient } from '../server/client-pool';
export type {
  ClientPoolEvents,
  ClientPoolOptions,
  ClientTransport,
  DrainPoolOptions,
  DrainResult,
  PooledChain,
  RefusalCode,
} from '../server/client-pool';
export { LineWorkTracker, connectionWorkProbe } from '../server/work-probe';
export type { WorkProbe } from '../server/work-probe';
export { DEFAULT_HOST, isLoopbackHost } from '../server/loopback';
export type { AgentFactory, AgentFactoryInfo, HostedAgent } from './agent-factory';
