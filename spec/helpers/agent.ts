/**
 * Test helpers for the conformance agent: build it when stale, spawn it, and speak raw NDJSON to
 * it line by line (over its stdio or a TCP socket) so specs can assert exact bytes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** The repository root. */
export const ROOT = resolve(__dirname, '..', '..');

/** The compiled conformance agent. */
export const AGENT_SCRIPT = join(ROOT, 'dist', 'examples', 'conformance-agent.js');

/** The `initialize` params the helpers send. */
export const CLIENT_INIT = { protocolVersion: 2, info: { name: 'spec-client', version: '1.0.0' }, capabilities: {} };

/** The package version the agent reports. */
export const PACKAGE_VERSION: string = (require(join(ROOT, 'package.json')) as { version: string }).version;

/** The agent's exact `initialize` result, as a JSON text. */
export const INIT_RESULT = `{"protocolVersion":2,"info":{"name":"acp-wire-conformance-agent","version":"${PACKAGE_VERSION}"},"capabilities":{"session":{}}}`;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Runs `npx tsc -p .` when `dist/examples/conformance-agent.js` is missing or older than a source
 * file in lib/, examples/ or bin/ (`npm test` builds first, so this only costs time when a spec is
 * run alone). A type error elsewhere does not stop the build from emitting; the check afterwards
 * is whether the agent's output is fresh.
 */
export function ensureBuilt(): void {
  const sources = Math.max(...['lib', 'examples', 'bin'].map((dir) => (existsSync(join(ROOT, dir)) ? newestMtime(join(ROOT, dir)) : 0)));
  const isFresh = (): boolean => existsSync(AGENT_SCRIPT) && statSync(AGENT_SCRIPT).mtimeMs >= sources;
  if (isFresh()) return;
  const result = spawnSync('npx', ['tsc', '-p', '.'], { cwd: ROOT, encoding: 'utf8' });
  if (!isFresh()) throw new Error(`the build did not produce a fresh ${AGENT_SCRIPT}:\n${result.stdout}${result.stderr}`);
}

/** Reads a stream line by line and writes raw lines: the client side of an NDJSON wire. */
export class LinePeer {
  readonly #lines: string[] = [];
  readonly #waiters: { resolve(line: string): void; reject(error: Error): void }[] = [];
  #buffer = '';
  #hasEnded = false;

  constructor(
    input: Readable,
    readonly output: Writable,
  ) {
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => this.#push(chunk));
    input.on('end', () => this.#end());
    input.on('close', () => this.#end());
    input.on('error', () => this.#end());
    output.on('error', () => {});
  }

  /** Writes one message: an object as one JSON line, a string as is plus `\n`. */
  send(message: object | string): void {
    this.output.write(typeof message === 'string' ? `${message}\n` : `${JSON.stringify(message)}\n`);
  }

  /** The next line received (without its `\n`); rejects if the stream ends first. */
  nextLine(): Promise<string> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.#hasEnded) return Promise.reject(new Error('the stream ended'));
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** The next `count` lines. */
  async nextLines(count: number): Promise<string[]> {
    const lines: string[] = [];
    while (lines.length < count) lines.push(await this.nextLine());
    return lines;
  }

  /** Lines up to and including the first one for which `isLast` is true. */
  async linesUntil(isLast: (line: string) => boolean): Promise<string[]> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.nextLine();
      lines.push(line);
      if (isLast(line)) return lines;
    }
  }

  /** The lines up to and including the response with `id`. */
  linesUntilResponse(id: number | string): Promise<string[]> {
    return this.linesUntil((line) => isResponseTo(line, id));
  }

  /** Sends a request and resolves with the exact line of its response (other lines are kept). */
  async request(id: number | string, method: string, params?: unknown): Promise<string> {
    this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    const lines = await this.linesUntilResponse(id);
    this.#lines.unshift(...lines.slice(0, -1));
    return lines[lines.length - 1];
  }

  /** Lines received but not read yet. */
  get unread(): readonly string[] {
    return this.#lines;
  }

  /** Resolves once the input has ended, with the lines not read. */
  async ended(): Promise<string[]> {
    const rest: string[] = [];
    for (;;) {
      try {
        rest.push(await this.nextLine());
      } catch {
        return rest;
      }
    }
  }

  #push(chunk: string): void {
    this.#buffer += chunk;
    let at: number;
    while ((at = this.#buffer.indexOf('\n')) !== -1) {
      const line = this.#buffer.slice(0, at);
      this.#buffer = this.#buffer.slice(at + 1);
      const waiter = this.#waiters.shift();
      if (waiter) waiter.resolve(line);
      else this.#lines.push(line);
    }
  }

  #end(): void {
    if (this.#hasEnded) return;
    this.#hasEnded = true;
    if (this.#buffer !== '') this.#lines.push(this.#buffer);
    this.#buffer = '';
    for (const waiter of this.#waiters.splice(0)) {
      const line = this.#lines.shift();
      if (line !== undefined) waiter.resolve(line);
      else waiter.reject(new Error('the stream ended'));
    }
  }
}

/** Whether `line` is a response whose id is `id`. */
export function isResponseTo(line: string, id: number | string): boolean {
  const message = JSON.parse(line) as { id?: unknown; method?: unknown };
  return message.method === undefined && message.id === id;
}

/** How a child process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running conformance agent. */
export interface AgentProcess {
  /** Its stdin/stdout as raw lines. */
  readonly peer: LinePeer;
  readonly child: ChildProcess;
  /** Everything it wrote on stderr so far. */
  readonly stderr: () => string;
  /** Resolves once it has exited. */
  readonly exited: Promise<Exit>;
  /** Ends its stdin and resolves once it has exited (SIGKILL after 5 s, so a hang fails loudly). */
  close(): Promise<Exit>;
}

/** Spawns `node dist/examples/conformance-agent.js ...args` with piped stdio. */
export function spawnAgent(args: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): AgentProcess {
  return spawnScript(AGENT_SCRIPT, args, env);
}

/** Spawns `node script ...args` with piped stdio. */
export function spawnScript(script: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): AgentProcess {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const close = async (): Promise<Exit> => {
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return { peer: new LinePeer(child.stdout!, child.stdin!), child, stderr: () => stderr, exited, close };
}

/** Spawns the agent and completes `initialize`; resolves with it. */
export async function initializedAgent(): Promise<AgentProcess> {
  const agent = spawnAgent();
  const line = await agent.peer.request('init', 'initialize', CLIENT_INIT);
  if (line !== `{"jsonrpc":"2.0","id":"init","result":${INIT_RESULT}}`) throw new Error(`initialize failed: ${line}`);
  return agent;
}

/** Opens a raw TCP socket to `port` on 127.0.0.1 as a {@link LinePeer}. */
export function connectLinePeer(port: number): Promise<{ peer: LinePeer; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve({ peer: new LinePeer(socket, socket), socket });
    });
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * Replaces generated UUIDs (session and message ids) by `<id1>`, `<id2>`… in order of first
 * appearance, consistently across every line given to the same namer, so a spec can compare
 * exact lines and still check that an id recurs.
 */
export class IdNamer {
  readonly #names = new Map<string, string>();

  /** The line with its UUIDs named. */
  name(line: string): string {
    return line.replace(UUID, (uuid) => {
      let name = this.#names.get(uuid);
      if (!name) this.#names.set(uuid, (name = `<id${this.#names.size + 1}>`));
      return name;
    });
  }

  /** Every line named. */
  names(lines: readonly string[]): string[] {
    return lines.map((line) => this.name(line));
  }

  /** The UUID named `name`. */
  idOf(name: string): string {
    for (const [uuid, known] of this.#names) if (known === name) return uuid;
    throw new Error(`no id named ${name}`);
  }
}
