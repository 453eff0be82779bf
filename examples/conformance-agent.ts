/**
 * The conformance agent: a small ACP agent built only on acp-wire's public API, driven by the
 * project's wire tests and by anyone with raw NDJSON (see "Conformance peers" in the README).
 *
 * Usage: `node dist/examples/conformance-agent.js [--tcp PORT]`. Logs go to stderr
 * (`ACP_WIRE_LOG=trace` adds the wire trace); stdout carries protocol lines only.
 *
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  ACP_PROTOCOL_VERSION,
  ErrorCode,
  INITIALIZE_METHOD,
  InitializeGate,
  RpcError,
  SESSION_CANCEL_METHOD,
  SESSION_NEW_METHOD,
  SESSION_PROMPT_METHOD,
  SESSION_UPDATE_METHOD,
  connectStdio,
  createStderrLogger,
  defaultLogger,
  listenTcp,
  type Connection,
  type JsonObject,
  type JsonValue,
  type NotificationMessage,
  type Responder,
} from '../lib';

/** The `info.name` the agent answers `initialize` with. */
export const CONFORMANCE_AGENT_NAME = 'acp-wire-conformance-agent';

/** ACP's "Resource not found" code, answered for an unknown `sessionId`. */
const RESOURCE_NOT_FOUND = -32002;

type Params = JsonObject;
type Outcome = 'done' | 'cancelled';

/** Timers of one agent state, all cleared when its connection closes so the process can exit. */
class Timers {
  readonly #live = new Set<NodeJS.Timeout>();
  #isClosed = false;

  /** Runs `fn` after `ms`; returns a function that stops it. */
  after(ms: number, fn: () => void): () => void {
    if (this.#isClosed) return noop;
    const timer = setTimeout(() => {
      this.#live.delete(timer);
      fn();
    }, ms);
    this.#live.add(timer);
    return () => {
      clearTimeout(timer);
      this.#live.delete(timer);
    };
  }

  clearAll(): void {
    this.#isClosed = true;
    for (const timer of this.#live) clearTimeout(timer);
    this.#live.clear();
  }
}

/** The work of one inserted prompt. */
interface TurnWork {
  readonly chunks: string[];
  readonly workMs: number;
}

/** One session: inserted prompts run as turns, one at a time, in insertion order. */
class Session {
  readonly id = randomUUID();
  readonly #queue: TurnWork[] = [];
  readonly #held = new Set<() => void>();
  #stopTurn: (() => void) | undefined;
  #isRunning = false;

  constructor(
    readonly connection: Connection,
    readonly timers: Timers,
  ) {}

  /** Holds a prompt for `ms` before insertion; a peer cancel or `session/cancel` ends the hold. */
  hold(ms: number, responder: Responder): Promise<Outcome> {
    const wait = waitUnlessCancelled(ms, responder, this.timers);
    this.#held.add(wait.cancel);
    return wait.outcome.finally(() => this.#held.delete(wait.cancel));
  }

  /** Inserts a prompt: its `user_message` now, its turn when the previous one ends. */
  insert(messageId: string, prompt: JsonValue[], workMs: number): void {
    this.#update({ sessionUpdate: 'user_message', messageId, content: prompt });
    this.#queue.push({ chunks: replyChunks(prompt), workMs });
    if (!this.#stopTurn) this.#runNext();
  }

  /** `session/cancel`: held prompts answer `-32800`; the running turn ends idle, `cancelled`. */
  cancel(): void {
    for (const cancelHeld of [...this.#held]) cancelHeld();
    this.#queue.length = 0;
    const stop = this.#stopTurn;
    if (!stop) return;
    stop();
    this.#stopTurn = undefined;
    this.#idle('cancelled');
  }

  #runNext(): void {
    const work = this.#queue.shift();
    if (!work) return this.#idle('end_turn');
    if (!this.#isRunning) this.#update({ sessionUpdate: 'state_update', state: 'running' });
    this.#isRunning = true;
    const messageId = randomUUID();
    const chunks = [...work.chunks];
    const step = work.workMs / chunks.length;
    let stop = noop;
    this.#stopTurn = () => stop();
    const next = (): void => {
      const text = chunks.shift();
      if (text === undefined) {
        this.#stopTurn = undefined;
        return this.#runNext();
      }
      this.#update({ sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text } });
      if (step === 0) next();
      else stop = this.timers.after(step, next);
    };
    next();
  }

  #idle(stopReason: 'end_turn' | 'cancelled'): void {
    this.#isRunning = false;
    this.#update({ sessionUpdate: 'state_update', state: 'idle', stopReason });
  }

  #update(update: JsonObject): void {
    if (this.connection.isClosed) return;
    this.connection.sendNotification(SESSION_UPDATE_METHOD, { sessionId: this.id, update });
  }
}

/** Options of {@link serveConformanceAgent}. */
export interface ConformanceAgentOptions {
  /** The `info.version` answered to `initialize`. Default: acp-wire's package version. */
  version?: string;
}

/**
 * Serves the conformance agent's methods on `connection`, with its own state (initialize gate,
 * sessions, received notifications); everything stops when the connection closes.
 *
 * @remarks The methods and their contract are listed in the README ("Conformance peers").
 * @example
 * ```ts
 * const [client, agent] = createConnectionPair();
 * serveConformanceAgent(agent);
 * await client.sendRequest('initialize', { protocolVersion: 2, info: { name: 'me', version: '1' } });
 * ```
 */
export function serveConformanceAgent(connection: Connection, options: ConformanceAgentOptions = {}): void {
  const timers = new Timers();
  const state: AgentState = { connection, timers, version: options.version ?? packageVersion(), sessions: new Map(), received: [] };
  new InitializeGate(connection);
  connection.once('close', () => timers.clearAll());
  handleNotifications(state);
  handleTestRequests(state);
  handleAcpRequests(state);
}

/** The state of one agent: one per connection. */
interface AgentState {
  readonly connection: Connection;
  readonly timers: Timers;
  readonly version: string;
  readonly sessions: Map<string, Session>;
  /** Every notification received, in order, for `_test/received`. */
  readonly received: JsonObject[];
}

function handleNotifications({ connection, sessions, received }: AgentState): void {
  const record = (message: NotificationMessage): void => {
    received.push(message.params === undefined ? { method: message.method } : { method: message.method, params: message.params });
  };
  connection.onAnyNotification((_params, message) => record(message));
  connection.onNotification('_test/notifyThrow', (_params, message) => {
    record(message);
    throw new Error('_test/notifyThrow: this notification handler always throws');
  });
  connection.onNotification(SESSION_CANCEL_METHOD, (params: unknown, message) => {
    record(message);
    if (isObject(params) && typeof params.sessionId === 'string') sessions.get(params.sessionId)?.cancel();
  });
}

function handleTestRequests({ connection, timers, received }: AgentState): void {
  connection.onRequest('_test/echo', (params: JsonValue | undefined) => params ?? null);
  connection.onRequest('_test/sleep', (params: unknown, responder) => sleep(params, responder, timers));
  connection.onRequest('_test/drop', (params: unknown, responder) => drop(params, responder, timers));
  connection.onRequest('_test/throw', (params: unknown) => {
    const { code, message, data } = objectParams(params);
    throw new RpcError(Number(code), String(message), data);
  });
  connection.onRequest('_test/throwPlain', (params: unknown) => {
    throw new Error(String(objectParams(params).message));
  });
  connection.onRequest('_test/hold', (params: unknown, responder) => {
    timers.after(milliseconds(objectParams(params), 'ms'), () => responder.respond({ held: true }));
  });
  connection.onRequest('_test/gc', async () => {
    await collectGarbage();
    return { ok: true };
  });
  connection.onRequest('_test/received', () => ({ notifications: [...received] }));
  connection.onRequest('_test/callClient', (params: unknown) => callClient(objectParams(params), connection, timers));
}

function handleAcpRequests({ connection, timers, version, sessions }: AgentState): void {
  connection.onRequest(INITIALIZE_METHOD, (params: unknown, responder) => initialize(params, responder, version, timers));
  connection.onRequest(SESSION_NEW_METHOD, (params: unknown) => {
    if (typeof objectParams(params).cwd !== 'string') throw RpcError.invalidParams('`cwd` must be a string');
    const session = new Session(connection, timers);
    sessions.set(session.id, session);
    return { sessionId: session.id };
  });
  connection.onRequest(SESSION_PROMPT_METHOD, (params: unknown, responder) => prompt(objectParams(params), responder, sessions));
}

function initialize(params: unknown, responder: Responder, version: string, timers: Timers): unknown {
  const meta = isObject(params) && isObject(params._meta) ? params._meta : {};
  const result = { protocolVersion: ACP_PROTOCOL_VERSION, info: { name: CONFORMANCE_AGENT_NAME, version }, capabilities: { session: {} } };
  switch (meta.test) {
    case 'drop':
      return undefined;
    case 'error':
      throw new RpcError(ErrorCode.InternalError, 'Internal error', 'initialize failed on request');
    case 'slow':
      return waitUnlessCancelled(milliseconds(meta, 'ms'), responder, timers).outcome.then((outcome) => {
        if (outcome === 'cancelled') throw RpcError.requestCancelled();
        return result;
      });
    default:
      return result;
  }
}

async function sleep(params: unknown, responder: Responder, timers: Timers): Promise<JsonValue> {
  const object = objectParams(params);
  const ms = milliseconds(object, 'ms');
  const onCancel = object.onCancel ?? 'error';
  if (onCancel !== 'error' && onCancel !== 'ignore' && onCancel !== 'partial') {
    throw RpcError.invalidParams('`onCancel` must be "error", "ignore" or "partial"');
  }
  if (onCancel === 'ignore') {
    await new Promise<void>((resolve) => timers.after(ms, resolve));
    return { slept: ms };
  }
  if ((await waitUnlessCancelled(ms, responder, timers).outcome) === 'done') return { slept: ms };
  if (onCancel === 'partial') return { partial: true };
  throw RpcError.requestCancelled();
}

/** Returns without answering; the responder is let go of now, or by a timer after `afterMs`. */
function drop(params: unknown, responder: Responder, timers: Timers): undefined {
  const afterMs = params === undefined ? 0 : milliseconds(objectParams(params), 'afterMs', 0);
  // The timer's closure is the only holder of the responder; once it has run, nothing is.
  if (afterMs > 0) timers.after(afterMs, () => void responder);
  return undefined;
}

async function prompt(params: Params, responder: Responder, sessions: Map<string, Session>): Promise<undefined> {
  const { sessionId, prompt: content } = params;
  if (typeof sessionId !== 'string') throw RpcError.invalidParams('`sessionId` must be a string');
  if (!Array.isArray(content) || content.length === 0) throw RpcError.invalidParams('`prompt` must be a non-empty array');
  const session = sessions.get(sessionId);
  if (!session) throw new RpcError(RESOURCE_NOT_FOUND, 'Resource not found', { sessionId });
  const meta = isObject(params._meta) ? params._meta : {};
  const insertDelayMs = milliseconds(meta, 'insertDelayMs', 0);
  const workMs = milliseconds(meta, 'workMs', 0);
  if (insertDelayMs > 0 && (await session.hold(insertDelayMs, responder)) === 'cancelled') throw RpcError.requestCancelled();
  // Inserted: from here the answer is success, whatever cancel races it.
  const messageId = randomUUID();
  responder.respond({ messageId });
  session.insert(messageId, content, workMs);
  return undefined;
}

async function callClient(params: Params, connection: Connection, timers: Timers): Promise<JsonObject> {
  const { method, params: inner, drop: isDrop } = params;
  if (typeof method !== 'string') throw RpcError.invalidParams('`method` must be a string');
  const cancelAfterMs = params.cancelAfterMs === undefined ? undefined : milliseconds(params, 'cancelAfterMs');
  if (isDrop === true) {
    sendUnconsumed(connection, method, inner);
    await collectGarbage();
    return { dropped: true };
  }
  const prepared = connection.prepareRequest<JsonValue>(method, inner);
  const handle = prepared.cancellationHandle();
  const sent = prepared.send();
  const stop = cancelAfterMs === undefined ? noop : timers.after(cancelAfterMs, () => handle.cancel());
  try {
    return { response: await sent };
  } catch (error) {
    if (error instanceof RpcError) return { response: errorJson(error) };
    throw error;
  } finally {
    stop();
  }
}

function errorJson(error: RpcError): JsonObject {
  const { code, message, data } = error.toJSON();
  return data === undefined ? { code, message } : { code, message, data };
}

/** Sends a request and lets go of its SentRequest at once (a separate frame, so nothing keeps it). */
function sendUnconsumed(connection: Connection, method: string, params: JsonValue | undefined): void {
  connection.sendRequest(method, params);
}

/**
 * Waits `ms`: `outcome` resolves `'done'`, or `'cancelled'` as soon as the peer cancels the request
 * or `cancel()` is called.
 */
function waitUnlessCancelled(ms: number, responder: Responder, timers: Timers): { outcome: Promise<Outcome>; cancel(): void } {
  const signal = responder.signal;
  let finish: (outcome: Outcome) => void = noop;
  const outcome = new Promise<Outcome>((resolve) => {
    finish = (result) => {
      stop();
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
  });
  const onAbort = (): void => {
    if (responder.isCancelled) finish('cancelled');
  };
  const stop = timers.after(ms, () => finish('done'));
  signal.addEventListener('abort', onAbort);
  return { outcome, cancel: () => finish('cancelled') };
}

let gc: (() => void) | undefined;

/** A full collection, then two macrotasks so that finalizers (automatic answers, cancels) run. */
async function collectGarbage(): Promise<void> {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  await nextMacrotask();
  await nextMacrotask();
}

/** The agent's reply to a prompt, as chunks: "echo: " and its text, one word per chunk. */
function replyChunks(prompt: JsonValue[]): string[] {
  const text = prompt
    .filter((block): block is JsonObject => isObject(block) && block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join(' ');
  return `echo: ${text}`.match(/\S+\s*/g) ?? ['echo:'];
}

function objectParams(params: unknown): Params {
  if (!isObject(params)) throw RpcError.invalidParams('params must be an object');
  return params;
}

function milliseconds(object: Params, name: string, fallback?: number): number {
  const value = object[name] ?? fallback;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
    throw RpcError.invalidParams(`\`${name}\` must be a non-negative number of milliseconds`);
  }
  return value;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function noop(): void {}

/** acp-wire's version, read at run time from the nearest package.json (works from `dist/examples/`). */
function packageVersion(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'acp-wire' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No (readable) package.json here: keep looking upwards.
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
}

/** The `--tcp PORT` (or `--tcp=PORT`) argument, `undefined` for stdio; exits 2 on anything else. */
function parsePort(argv: readonly string[]): number | undefined {
  if (argv.length === 0) return undefined;
  const [flag, value] = argv[0].startsWith('--tcp=') ? ['--tcp', argv[0].slice(6)] : argv;
  const port = Number(value);
  const isValid = flag === '--tcp' && argv.length === (argv[0] === '--tcp' ? 2 : 1) && value !== '' && Number.isInteger(port);
  if (!isValid || port < 0 || port > 65535) {
    process.stderr.write('usage: conformance-agent [--tcp PORT]\n');
    process.exit(2);
  }
  return port;
}

async function main(): Promise<void> {
  const port = parsePort(process.argv.slice(2));
  // Warnings by default (a failing notification handler, bad input); `ACP_WIRE_LOG` overrides.
  const logger = process.env.ACP_WIRE_LOG ? defaultLogger('agent') : createStderrLogger({ name: 'agent' });
  const version = packageVersion();
  if (port === undefined) {
    serveConformanceAgent(connectStdio({ logger, name: 'agent' }), { version });
    return;
  }
  const listener = await listenTcp({ port }, (connection) => serveConformanceAgent(connection, { version }), { logger, name: 'agent' });
  process.stdout.write(`listening ${listener.port}\n`);
  // In TCP mode stdin carries no protocol: its end is the signal to stop.
  process.stdin.on('end', () => void listener.close());
  process.stdin.on('error', () => void listener.close());
  process.stdin.resume();
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`conformance-agent: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
