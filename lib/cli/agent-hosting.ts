/**
 * How `acp-wire serve` runs each client's agent, whichever way it runs them: a process each, or an
 * instance each in its own process (`--agent-module`).
 *
 * @packageDocumentation
 */
import type { Duplex } from 'node:stream';
import type { WorkProbe } from '../server/work-probe';
import type { RemoteClientInfo } from '../transports/remote/remote-connection';
import type { StoppableProcess } from './shutdown';

/** How `serve` runs each client's agent: a process each, or an instance each in this process. */
export interface AgentHosting {
  /** Starts the agent of a new client; returns the probe of its requests in flight, for a drain. */
  onStream(stream: Duplex, info: RemoteClientInfo): WorkProbe;
  /** The agent processes running now, which a forced stop kills. */
  processes(): Iterable<StoppableProcess>;
  /** Resolves once every agent started so far has ended. */
  ended(): Promise<void>;
}
