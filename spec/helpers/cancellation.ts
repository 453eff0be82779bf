/**
 * The cancellation specs' fixtures: the wire agent (the conformance agent over child-process
 * stdio) and a TCP server, each spoken to with raw lines through one {@link WireEndpoint}; a
 * capturing logger; and the work pair most sending-side specs share.
 */
import { createStderrLogger, listenTcp, type Connection, type JsonValue, type LogLevel, type Logger, type Responder } from '../../lib';
import type { LineReader } from './lines';
import { isCancelFor, type WireMessage } from './messages';
import { tappedPair, type TappedPair } from './peers';
import { CONFORMANCE_AGENT, ensureBuilt, spawnScript } from './processes';
import { connectRaw } from './sockets';
import { CLIENT_INIT } from './conformance-agent';

/** A logger that records every record (all levels but trace). */
export interface CapturingLogger extends Logger {
  readonly records: { level: LogLevel; message: string }[];
}

/** Creates a {@link CapturingLogger}. */
export function captureLogger(): CapturingLogger {
  const records: { level: LogLevel; message: string }[] = [];
  return { traces: false, records, log: (level, message) => void records.push({ level, message }) };
}

/** A peer process (or socket) spoken to with raw lines. */
export interface WireEndpoint {
  /** Writes each item as one line (a string as it is, anything else as JSON). */
  send(...items: unknown[]): void;
  /** Every line received from the peer. */
  readonly received: LineReader;
  /** Sends a request with a fresh string id and resolves with its response. */
  call(method: string, params?: JsonValue): Promise<WireMessage>;
  /** A fresh string id, unique for this endpoint. */
  nextId(): string;
  /** Ends the stream and resolves once the peer has gone (exit code for a process). */
  close(): Promise<number | null>;
}

function endpoint(send: (...items: unknown[]) => void, received: LineReader, close: () => Promise<number | null>): WireEndpoint {
  let counter = 0;
  const nextId = (): string => `t${++counter}`;
  const call = (method: string, params?: JsonValue): Promise<WireMessage> => {
    const id = nextId();
    send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return received.response(id);
  };
  return { send, received, call, nextId, close };
}

/**
 * Starts the conformance agent (with `--expose-gc`) over stdio and, unless `initialize: false`,
 * completes `initialize`. Builds the project first when stale.
 *
 * @remarks `stderr()` is what it wrote on stderr; `close()` ends its stdin and resolves with the
 * exit code (SIGKILL after 10 s: an agent that does not exit fails the exit-code check).
 */
export async function startWireAgent(options: { initialize?: boolean } = {}): Promise<WireEndpoint & { stderr(): string }> {
  ensureBuilt();
  const agent = spawnScript(CONFORMANCE_AGENT, [], { nodeArgs: ['--expose-gc'] });
  const wire = endpoint(agent.send, agent.stdout, async () => (await agent.stop(10_000)).code);
  if (options.initialize !== false) {
    const answer = await wire.call('initialize', CLIENT_INIT);
    if (!('result' in answer)) throw new Error(`initialize failed: ${JSON.stringify(answer)}`);
  }
  return { ...wire, stderr: () => agent.stderr.text };
}

/** A TCP server whose connections are set up by `setup`, and a raw socket client connected to it. */
export async function serveOverTcp(setup: (connection: Connection) => void): Promise<WireEndpoint> {
  const listener = await listenTcp({ port: 0 }, setup, { logger: createStderrLogger({ level: 'error' }) });
  const client = await connectRaw(listener.port);
  return endpoint(client.send, client.lines, async () => {
    await Promise.all([client.close(), listener.close()]);
    return null;
  });
}

/** The fixture most sending-side specs share: see {@link useWorkPair}. */
export interface WorkPair {
  /** This test's pair (rebuilt before each test, closed after it): left is the client, right the agent. */
  readonly pair: TappedPair;
  /** The responders of every `work` request the agent received, in order (never answered by themselves). */
  readonly held: Responder[];
  /** How many `$/cancel_request`s for `id` the client wrote. */
  cancelsFor(id: unknown): number;
  /** Waits until the agent has received `count` `work` requests. */
  received(count: number): Promise<void>;
  /** A round trip: every line the client wrote before it has reached the agent. */
  barrier(): Promise<void>;
}

/**
 * Registers mocha hooks that give each test a fresh {@link TappedPair} whose right side (the agent)
 * holds every `work` responder and answers `echo` with its params, and close it afterwards.
 */
export function useWorkPair(): WorkPair {
  let pair: TappedPair | undefined;
  let held: Responder[] = [];
  beforeEach(() => {
    pair = tappedPair();
    held = [];
    pair.right.onRequest('work', (_params, responder) => void held.push(responder));
    pair.right.onRequest('echo', (params) => params);
  });
  afterEach(async () => {
    await pair?.close();
  });
  const current = (): TappedPair => {
    if (!pair) throw new Error('useWorkPair() is used outside a test');
    return pair;
  };
  return {
    get pair() {
      return current();
    },
    get held() {
      return held;
    },
    cancelsFor: (id) => current().fromLeft.matching(isCancelFor(id)).length,
    received: async (count) => {
      const { fromLeft } = current();
      await fromLeft.find(() => fromLeft.matching((m) => m.method === 'work').length >= count);
    },
    barrier: async () => void (await current().left.sendRequest('echo', { barrier: true })),
  };
}
