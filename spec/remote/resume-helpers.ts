/**
 * Helpers of the resumption specs: a seeded random generator, a resumable server running the
 * conformance agent behind a fault proxy, and a client workload that records what it sees.
 */
import { expect } from 'chai';
import {
  type Connection,
  type ReconnectOptions,
  type RemoteListener,
  type ResumeOptions,
  connectHttp,
  connectWebSocket,
  listenRemote,
} from '../../lib';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import { startFaultProxy, type FaultProxy } from '../fixtures/fault-proxy';
import { closeOf, expectTcpHandles, tcpHandles } from './remote-helpers';

export { seededRandom } from '../helpers/random';

/** The transports under test. */
export type ResumeTransport = 'websocket' | 'http';

/** A resumable server with the conformance agent, behind a fault proxy. */
export interface ResumeBench {
  readonly listener: RemoteListener;
  readonly proxy: FaultProxy;
  /** How many agent connections the server created (1 when a client was never restarted). */
  readonly agents: { connection: Connection; closed: ReturnType<typeof closeOf>; connectionId: string }[];
  /** The URL of the proxy for `transport`. */
  url(transport: ResumeTransport): string;
  close(): Promise<void>;
}

export const FAST_HEARTBEAT = { intervalMs: 100, timeoutMs: 400 };

/**
 * Starts a server running the conformance agent (at most `maxClients`), resumable unless `resume`
 * is `false`, and a fault proxy in front of it.
 */
export async function startResumeBench(resume: ResumeOptions | false, maxClients?: number): Promise<ResumeBench> {
  const agents: ResumeBench['agents'] = [];
  const listener = await listenRemote({ resume, heartbeat: FAST_HEARTBEAT, maxClients }, (connection, info) => {
    agents.push({ connection, closed: closeOf(connection), connectionId: info.connectionId });
    serveConformanceAgent(connection);
  });
  const proxy = await startFaultProxy(listener.port);
  return {
    listener,
    proxy,
    agents,
    url: (transport) => `${transport === 'websocket' ? 'ws' : 'http'}://127.0.0.1:${proxy.port}/acp`,
    close: async () => {
      await proxy.close();
      await listener.close();
    },
  };
}

/**
 * Mocha hooks for a describe block: each test's benches (started with the function returned) are
 * closed after it, and it must leave no TCP handle open.
 */
export function useResumeBenches(): typeof startResumeBench {
  let baseline = 0;
  const started: ResumeBench[] = [];
  beforeEach(() => {
    baseline = tcpHandles();
  });
  afterEach(async () => {
    for (const bench of started.splice(0)) await bench.close();
    await expectTcpHandles(baseline);
  });
  return async (resume, maxClients) => {
    const bench = await startResumeBench(resume, maxClients);
    started.push(bench);
    return bench;
  };
}

/** Connects a client that reconnects by itself, over `transport`. */
export async function connectResuming(url: string, transport: ResumeTransport, reconnect: ReconnectOptions): Promise<Connection> {
  if (transport === 'websocket') return connectWebSocket(url, { heartbeat: FAST_HEARTBEAT, reconnect, handshakeTimeoutMs: 1000 });
  return connectHttp(url, { reconnect });
}

/** What a client saw of one session's turns. */
export interface TurnLog {
  /** The chunks' texts, per turn (the `session/prompt` request's index). */
  readonly chunks: string[][];
  /** The stop reasons, in the order they arrived (v2: idle updates; v1: answers). */
  readonly stops: string[];
  /** Updates of the wrong session, or chunks of no running turn. */
  readonly strays: unknown[];
}

/** Records the `session/update`s of `sessionId` on `client`, turn by turn. */
export function recordTurns(
  client: Connection,
  sessionId: string,
): TurnLog & { stops: string[]; startTurn(): void; whenStops(count: number): Promise<void> } {
  const log = { chunks: [] as string[][], stops: [] as string[], strays: [] as unknown[] };
  let waiters: { count: number; resolve: () => void }[] = [];
  const wake = (): void => {
    const ready = waiters.filter((w) => log.stops.length >= w.count);
    waiters = waiters.filter((w) => log.stops.length < w.count);
    for (const w of ready) w.resolve();
  };
  client.onNotification('session/update', (params) => {
    const { sessionId: session, update } = params as {
      sessionId: string;
      update: { sessionUpdate: string; content?: { text?: string }; state?: string; stopReason?: string };
    };
    const turn = log.chunks.at(-1);
    if (session !== sessionId || turn === undefined) return void log.strays.push(params);
    if (update.sessionUpdate === 'agent_message_chunk') turn.push(update.content?.text ?? '');
    if (update.sessionUpdate === 'state_update' && update.state === 'idle') {
      log.stops.push(update.stopReason ?? '?');
      wake();
    }
  });
  const stops = log.stops;
  return {
    ...log,
    stops,
    startTurn: () => void log.chunks.push([]),
    // v1 has no idle update: its stops are pushed by the caller when the answer arrives.
    whenStops: (count) => (stops.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
  };
}

/** Expects the server's one agent connection to still be open (never restarted) and `count` clients. */
export function expectOneAgent(bench: ResumeBench): void {
  expect(bench.agents.length, 'agent connections created').to.equal(1);
  expect(bench.agents[0]!.connection.isClosed, 'the agent connection is open').to.equal(false);
  expect(bench.listener.clientCount).to.equal(1);
}
