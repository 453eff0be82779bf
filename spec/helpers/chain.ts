/**
 * Helpers for proxy-chain specs: in-memory hops whose bytes can be read, and a raw NDJSON client
 * of the conductor process (stdout lines, stderr trace lines, exit). Waits on events, never sleeps.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { Connection, type ConnectionOptions, type Logger } from '../../lib';

/** The repository root. */
export const ROOT = resolve(__dirname, '..', '..');

/** The compiled command line, passthrough proxy and conformance agent. */
export const CLI = join(ROOT, 'dist', 'bin', 'acp-wire.js');
export const PASSTHROUGH = join(ROOT, 'dist', 'examples', 'passthrough-proxy.js');
export const AGENT = join(ROOT, 'dist', 'examples', 'conformance-agent.js');

/** Command lines (as the conductor takes them) of the compiled peers and of the matrix fixture proxy. */
export const PASSTHROUGH_COMMAND = `node ${PASSTHROUGH}`;
export const AGENT_COMMAND = `node ${AGENT}`;
export function matrixProxyCommand(mode: string): string {
  return `node -r ts-node/register/transpile-only ${join(ROOT, 'spec', 'fixtures', 'matrix-proxy.ts')} ${mode}`;
}

/** The `initialize` params the chain specs send. */
export const CLIENT_INIT = { protocolVersion: 2, info: { name: 'chain-spec', version: '1.0.0' }, capabilities: {} };

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Runs `npx tsc -p .` when a compiled peer is missing or older than a source in lib/, examples/ or
 * bin/ (`npm test` builds first, so this only costs time when a spec runs alone).
 */
export function ensureChainBuilt(): void {
  const sources = Math.max(...['lib', 'examples', 'bin'].map((dir) => newestSource(join(ROOT, dir))));
  const isFresh = (): boolean => [CLI, PASSTHROUGH, AGENT].every((file) => existsSync(file) && statSync(file).mtimeMs >= sources);
  if (isFresh()) return;
  const result = spawnSync('npx', ['tsc', '-p', '.'], { cwd: ROOT, encoding: 'utf8' });
  if (!isFresh()) throw new Error(`the build did not produce fresh peers:\n${result.stdout}${result.stderr}`);
}

type Waiter = { match(line: string): boolean; resolve(line: string): void; reject(error: Error): void };

/**
 * Lines of a text stream, kept in order; `take(match)` removes and returns the first line that
 * matches (waiting for it if needed), so specs can pick lines out of interleaved traffic.
 */
export class LineQueue {
  /** Every line received so far, in order (taken ones included). */
  readonly all: string[] = [];
  readonly #untaken: string[] = [];
  readonly #waiters: Waiter[] = [];
  #buffer = '';
  #isEnded = false;

  constructor(stream: Readable, readonly label: string) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => this.#push(chunk));
    stream.once('end', () => this.#end());
    stream.once('close', () => this.#end());
  }

  /** Removes and returns the first line that matches; rejects if the stream ends without one. */
  take(match: (line: string) => boolean = () => true): Promise<string> {
    const at = this.#untaken.findIndex(match);
    if (at !== -1) return Promise.resolve(this.#untaken.splice(at, 1)[0]!);
    if (this.#isEnded) return Promise.reject(this.#endedError());
    return new Promise((resolve, reject) => this.#waiters.push({ match, resolve, reject }));
  }

  /** Lines received so far that match (taken or not). */
  matching(match: (line: string) => boolean): string[] {
    return this.all.filter(match);
  }

  #push(chunk: string): void {
    this.#buffer += chunk;
    let nl = this.#buffer.indexOf('\n');
    while (nl !== -1) {
      this.#line(this.#buffer.slice(0, nl));
      this.#buffer = this.#buffer.slice(nl + 1);
      nl = this.#buffer.indexOf('\n');
    }
  }

  #line(line: string): void {
    this.all.push(line);
    const at = this.#waiters.findIndex((waiter) => waiter.match(line));
    if (at === -1) this.#untaken.push(line);
    else this.#waiters.splice(at, 1)[0]!.resolve(line);
  }

  #end(): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(this.#endedError());
  }

  #endedError(): Error {
    return new Error(`${this.label} ended without the expected line; it had:\n${this.all.join('\n')}`);
  }
}

/** A line that is a JSON-RPC response with this id. */
export function isResponseTo(id: number | string): (line: string) => boolean {
  return (line) => {
    const message = tryParse(line);
    return message !== undefined && message.id === id && !('method' in message);
  };
}

/** A line that is a message (request or notification) with this method. */
export function hasMethod(method: string): (line: string) => boolean {
  return (line) => tryParse(line)?.method === method;
}

/** A trace line of `--trace` output: `<time> <hop> trace <arrow> <json>`, for one hop and arrow. */
export function traceOf(hop: string, arrow: '->' | '<-', match: (json: Record<string, unknown>) => boolean): (line: string) => boolean {
  const marker = ` ${hop} trace ${arrow} `;
  return (line) => {
    const at = line.indexOf(marker);
    if (at === -1) return false;
    const json = tryParse(line.slice(at + marker.length));
    return json !== undefined && match(json);
  };
}

/** The JSON part of a trace line. */
export function traceJson(line: string): Record<string, unknown> {
  return JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>;
}

/** Whether a parsed message has this method. */
export function hasMethodJson(method: string): (json: Record<string, unknown>) => boolean {
  return (json) => json.method === method;
}

/** Whether a parsed message is a `$/cancel_request` (optionally naming `requestId`). */
export function isCancel(requestId?: unknown): (json: Record<string, unknown>) => boolean {
  return (json) =>
    json.method === '$/cancel_request' && (requestId === undefined || (json.params as { requestId?: unknown }).requestId === requestId);
}

function tryParse(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A spawned conductor command line, driven with raw NDJSON. */
export interface ConductorProcess {
  readonly child: ChildProcess;
  /** Protocol lines the conductor wrote to stdout. */
  readonly stdout: LineQueue;
  /** Lines it (and its components) wrote to stderr. */
  readonly stderr: LineQueue;
  /** Resolves with the exit code (or signal) once the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Writes one message as one line (a string is written as is, plus `\n`). */
  send(message: object | string): void;
  /** Sends a request and resolves with the parsed response line. */
  request(id: number | string, method: string, params?: unknown): Promise<Record<string, unknown>>;
  /** Ends the conductor's stdin and resolves with its exit. */
  end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `node dist/bin/acp-wire.js conduct <args>` from the repository root. */
export function spawnConductor(args: readonly string[], env: NodeJS.ProcessEnv = {}): ConductorProcess {
  const child = spawn(process.execPath, [CLI, 'conduct', ...args], { cwd: ROOT, env: { ...process.env, ACP_WIRE_LOG: '', ...env } });
  const stdout = new LineQueue(child.stdout!, 'conductor stdout');
  const stderr = new LineQueue(child.stderr!, 'conductor stderr');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  child.stdin!.on('error', () => {});
  const send = (message: object | string): void => {
    child.stdin!.write(typeof message === 'string' ? `${message}\n` : `${JSON.stringify(message)}\n`);
  };
  const request = async (id: number | string, method: string, params?: unknown): Promise<Record<string, unknown>> => {
    send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return JSON.parse(await stdout.take(isResponseTo(id))) as Record<string, unknown>;
  };
  const end = (): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
    child.stdin!.end();
    return exited;
  };
  return { child, stdout, stderr, exited, send, request, end };
}

/** Two connections over in-memory streams whose bytes each side sent can be read as lines. */
export interface TappedPair {
  readonly left: Connection;
  readonly right: Connection;
  /** Lines `left` wrote (what `right` received). */
  readonly fromLeft: LineQueue;
  /** Lines `right` wrote (what `left` received). */
  readonly fromRight: LineQueue;
  /** Writes a raw line to `right` as if `left` had sent it. */
  injectToRight(line: string): void;
  close(): Promise<void>;
}

/** Like `createConnectionPair`, with a tap on each direction. */
export function tappedPair(leftOptions: ConnectionOptions = {}, rightOptions: ConnectionOptions = {}): TappedPair {
  const leftToRight = new PassThrough();
  const rightToLeft = new PassThrough();
  const fromLeft = new LineQueue(tap(leftToRight), 'left');
  const fromRight = new LineQueue(tap(rightToLeft), 'right');
  const left = new Connection(rightToLeft, leftToRight, leftOptions);
  const right = new Connection(leftToRight, rightToLeft, rightOptions);
  const injectToRight = (line: string): void => void leftToRight.write(`${line}\n`);
  const close = async (): Promise<void> => void (await Promise.all([left.close(), right.close()]));
  return { left, right, fromLeft, fromRight, injectToRight, close };
}

/** Four connections in two hops: client ⇄ proxy (upstream side), proxy (downstream side) ⇄ agent. */
export interface TwoHops {
  readonly client: Connection;
  readonly proxyUp: Connection;
  readonly proxyDown: Connection;
  readonly agent: Connection;
  /** The client ⇄ proxy hop (left: client). */
  readonly up: TappedPair;
  /** The proxy ⇄ agent hop (left: proxy). */
  readonly down: TappedPair;
  close(): Promise<void>;
}

/** Builds {@link TwoHops}; the proxy side is wired by the spec. */
export function twoHops(): TwoHops {
  const up = tappedPair();
  const down = tappedPair();
  return {
    client: up.left,
    proxyUp: up.right,
    proxyDown: down.left,
    agent: down.right,
    up,
    down,
    close: async () => void (await Promise.all([up.close(), down.close()])),
  };
}

function tap(stream: PassThrough): PassThrough {
  const copy = new PassThrough();
  stream.on('data', (chunk: Buffer) => copy.write(chunk));
  stream.once('end', () => copy.end());
  return copy;
}

/** A logger factory whose trace lines (`<name> trace -> <json>`) can be awaited like `--trace` output. */
export function traceRecorder(): { logger: (name: string) => Logger; lines: LineQueue; stream: PassThrough } {
  const stream = new PassThrough();
  const lines = new LineQueue(stream, 'trace');
  const logger = (name: string): Logger => ({
    traces: true,
    log: (level, message) => void stream.write(`- ${name} ${level} ${message}\n`),
  });
  return { logger, lines, stream };
}
