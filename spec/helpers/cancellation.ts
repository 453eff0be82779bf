/**
 * Test helpers for the cancellation specs: line taps on streams, a connection driven by raw lines,
 * the conformance agent over child-process stdio, a raw TCP client, a capturing logger and a seeded PRNG.
 * Everything waits on events, never on sleeps.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import {
  Connection,
  createStderrLogger,
  listenTcp,
  type ConnectionOptions,
  type JsonObject,
  type JsonValue,
  type LogLevel,
  type Logger,
  type Responder,
  type TcpListener,
} from '../../lib';
import { seededRandom } from './random';

export { seededRandom };

/** The exact cancelled error object on the wire. */
export const CANCELLED_ERROR = '{"code":-32800,"message":"Request cancelled"}';

/** A parsed NDJSON line. */
export type WireMessage = JsonObject & { id?: JsonValue; method?: string; params?: JsonValue };

interface Waiter {
  predicate: (message: WireMessage) => boolean;
  resolve: (message: WireMessage) => void;
}

/** Records every complete line that flows through a readable stream (without consuming it). */
export class LineTap {
  /** Every complete line so far, without its newline. */
  readonly lines: string[] = [];
  /** One parsed message per line, in order (`{}` for a line that is not a JSON object). */
  readonly messages: WireMessage[] = [];
  #partial = '';
  #waiters: Waiter[] = [];

  constructor(stream: Readable) {
    stream.on('data', (chunk: Buffer | string) => this.#feed(chunk.toString()));
  }

  /** Resolves with the first message, past or future, that matches `predicate`. */
  waitFor(predicate: (message: WireMessage) => boolean): Promise<WireMessage> {
    const found = this.messages.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ predicate, resolve }));
  }

  /** Resolves with the response to `id` (the first one), past or future. */
  response(id: unknown): Promise<WireMessage> {
    return this.waitFor((m) => isResponse(m) && sameId(m.id, id));
  }

  /** The exact line a recorded message was parsed from. */
  lineOf(message: WireMessage): string {
    return this.lines[this.messages.indexOf(message)]!;
  }

  /** How many recorded messages match `predicate`. */
  count(predicate: (message: WireMessage) => boolean): number {
    return this.messages.filter(predicate).length;
  }

  #feed(text: string): void {
    const parts = (this.#partial + text).split('\n');
    this.#partial = parts.pop()!;
    for (const line of parts) this.#record(line);
  }

  #record(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    this.lines.push(line);
    // Keep indexes aligned with `lines`: a non-object line is recorded as an empty message.
    const message = (typeof value === 'object' && value !== null ? value : {}) as WireMessage;
    this.messages.push(message);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.predicate(message)) return true;
      w.resolve(message);
      return false;
    });
  }
}

/** Whether `m` is a response (no method, has an id). */
export function isResponse(m: WireMessage): boolean {
  return !('method' in m) && 'id' in m;
}

/** Whether `m` is a `$/cancel_request` (plain) for `id`, or for any id when `id` is omitted. */
export function isCancelFor(m: WireMessage, id?: unknown): boolean {
  if (m.method !== '$/cancel_request' || 'id' in m) return false;
  return id === undefined || sameId((m.params as JsonObject | undefined)?.requestId, id);
}

/** JSON value equality for ids (numbers by value, strings by text, types kept apart). */
export function sameId(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A connection under test whose peer is raw NDJSON lines. */
export interface RawPeer {
  /** The connection under test. */
  readonly connection: Connection;
  /** Every line the connection wrote. */
  readonly sent: LineTap;
  /** Writes one line (an object is JSON-encoded) to the connection. */
  write(message: object | string): void;
  /** Closes the connection and ends its input. */
  close(): Promise<void>;
}

/** Creates a {@link Connection} over in-memory streams driven by raw lines. */
export function createRawPeer(options: ConnectionOptions = {}): RawPeer {
  const input = new PassThrough();
  const output = new PassThrough();
  const sent = new LineTap(output);
  output.resume();
  const connection = new Connection(input, output, options);
  return {
    connection,
    sent,
    write: (message) => void input.write(typeof message === 'string' ? message : JSON.stringify(message) + '\n'),
    close: async () => {
      await connection.close();
      input.end();
    },
  };
}

/** Two connected connections with a tap on each direction. */
export interface TappedPair {
  readonly client: Connection;
  readonly agent: Connection;
  /** Lines the client wrote (the agent's input). */
  readonly toAgent: LineTap;
  /** Lines the agent wrote (the client's input). */
  readonly toClient: LineTap;
  /** Closes both connections. */
  close(): Promise<void>;
}

/** Like `createConnectionPair()`, with a {@link LineTap} on each direction. */
export function createTappedPair(clientOptions: ConnectionOptions = {}, agentOptions: ConnectionOptions = clientOptions): TappedPair {
  const clientToAgent = new PassThrough();
  const agentToClient = new PassThrough();
  const toAgent = new LineTap(clientToAgent);
  const toClient = new LineTap(agentToClient);
  const client = new Connection(agentToClient, clientToAgent, clientOptions);
  const agent = new Connection(clientToAgent, agentToClient, agentOptions);
  return { client, agent, toAgent, toClient, close: async () => void (await Promise.all([client.close(), agent.close()])) };
}

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
  /** Writes one line (an object is JSON-encoded). */
  send(message: object | string): void;
  /** Every line received from the peer. */
  readonly received: LineTap;
  /** Sends a request with a fresh string id and resolves with its response. */
  call(method: string, params?: JsonValue): Promise<WireMessage>;
  /** A fresh string id, unique for this endpoint. */
  nextId(): string;
  /** Ends the stream and resolves once the peer has gone (exit code for a process). */
  close(): Promise<number | null>;
}

const CONFORMANCE_AGENT = join(__dirname, '..', '..', 'dist', 'examples', 'conformance-agent.js');

/** The command line of the wire agent: the built conformance agent (`npm run build` first). */
export function wireAgentCommand(): string[] {
  if (!existsSync(CONFORMANCE_AGENT)) throw new Error(`${CONFORMANCE_AGENT} is missing: run \`npm run build\` first`);
  return ['--expose-gc', CONFORMANCE_AGENT];
}

/**
 * Starts the wire agent as a child process over stdio and (unless `initialize: false`) completes
 * `initialize`.
 *
 * @remarks Its stderr is collected in `stderr()`; `close()` ends its stdin and resolves with the
 * exit code.
 */
export async function startWireAgent(options: { initialize?: boolean } = {}): Promise<WireEndpoint & { stderr(): string }> {
  const child = spawn(process.execPath, wireAgentCommand(), { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const endpoint = endpointOver(
    (line) => void child.stdin.write(line),
    child.stdout,
    async () => {
      child.stdin.end();
      // A safety net for an agent that does not exit on end of input: it fails the exit-code check.
      const kill = setTimeout(() => child.kill(), 10_000).unref();
      const code = await exited;
      clearTimeout(kill);
      return code;
    },
  );
  if (options.initialize !== false) {
    const answer = await endpoint.call('initialize', { protocolVersion: 2, capabilities: {} });
    if (!('result' in answer)) throw new Error(`initialize failed: ${JSON.stringify(answer)}`);
  }
  return { ...endpoint, stderr: () => stderr };
}

/** A TCP server whose connections are set up by `setup`, and a raw socket client connected to it. */
export async function serveOverTcp(setup: (connection: Connection) => void): Promise<WireEndpoint> {
  const listener: TcpListener = await listenTcp({ port: 0 }, setup, { logger: createStderrLogger({ level: 'error' }) });
  const socket: Socket = createConnection({ host: '127.0.0.1', port: listener.port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return endpointOver(
    (line) => void socket.write(line),
    socket,
    async () => {
      socket.end();
      await Promise.all([listener.close(), closed]);
      return null;
    },
  );
}

function endpointOver(write: (line: string) => void, input: Readable, close: () => Promise<number | null>): WireEndpoint {
  const received = new LineTap(input);
  let counter = 0;
  const nextId = (): string => `t${++counter}`;
  const send = (message: object | string): void => write(typeof message === 'string' ? message : JSON.stringify(message) + '\n');
  const call = (method: string, params?: JsonValue): Promise<WireMessage> => {
    const id = nextId();
    send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return received.response(id);
  };
  return { send, received, call, nextId, close };
}

/** A promise with its resolve function outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

/** Resolves with the error a promise-like rejects with; fails if it resolves. */
export async function rejectionOf(promise: PromiseLike<unknown>): Promise<unknown> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}

/** The fixture most sending-side specs share: see {@link useWorkPair}. */
export interface WorkPair {
  /** This test's pair (rebuilt before each test, closed after it). */
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
 * Registers mocha hooks that give each test a fresh {@link TappedPair} whose agent holds every
 * `work` responder and answers `echo` with its params, and close it afterwards.
 */
export function useWorkPair(): WorkPair {
  let pair: TappedPair | undefined;
  let held: Responder[] = [];
  beforeEach(() => {
    pair = createTappedPair();
    held = [];
    pair.agent.onRequest('work', (_params, responder) => void held.push(responder));
    pair.agent.onRequest('echo', (params) => params);
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
    cancelsFor: (id) => current().toAgent.count((m) => isCancelFor(m, id)),
    received: async (count) => {
      const { toAgent } = current();
      await toAgent.waitFor(() => toAgent.count((m) => m.method === 'work') >= count);
    },
    barrier: async () => void (await current().client.sendRequest('echo', { barrier: true })),
  };
}
