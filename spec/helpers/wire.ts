/**
 * Helpers for specs that look at exact NDJSON lines: a line collector, spawned fixture processes,
 * raw TCP sockets, and the exact-bytes cases of spec/wire.md. Everything waits on events, never sleeps.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** The project root (fixtures run from here so ts-node finds tsconfig.json). */
export const PROJECT_ROOT = join(__dirname, '..', '..');

interface LineWaiter {
  count: number;
  resolve(lines: string[]): void;
  reject(error: Error): void;
}

/**
 * Collects the lines of a byte stream exactly as written (without their `\n`), and lets a test
 * await a number of lines. Text after the last newline is kept in {@link LineCollector.rest}.
 */
export class LineCollector {
  readonly lines: string[] = [];
  #rest = '';
  #isEnded = false;
  #waiters: LineWaiter[] = [];

  constructor(
    stream: Readable,
    readonly label = 'stream',
  ) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => this.#push(chunk));
    stream.once('end', () => this.#end());
    stream.once('close', () => this.#end());
  }

  /** Text received after the last newline (should stay empty on a protocol stream). */
  get rest(): string {
    return this.#rest;
  }

  /** Whether the stream has ended. */
  get isEnded(): boolean {
    return this.#isEnded;
  }

  /** Every line parsed as JSON. */
  parsed(): unknown[] {
    return this.lines.map((line) => JSON.parse(line) as unknown);
  }

  /** Resolves with all lines once at least `count` have arrived; rejects if the stream ends first. */
  waitFor(count: number): Promise<string[]> {
    if (this.lines.length >= count) return Promise.resolve(this.lines.slice());
    if (this.#isEnded) return Promise.reject(this.#shortError(count));
    return new Promise((resolve, reject) => this.#waiters.push({ count, resolve, reject }));
  }

  /** Resolves with the next `count` lines after the ones already received. */
  async next(count = 1): Promise<string[]> {
    const start = this.lines.length;
    const lines = await this.waitFor(start + count);
    return lines.slice(start, start + count);
  }

  #push(chunk: string): void {
    const parts = (this.#rest + chunk).split('\n');
    this.#rest = parts.pop()!;
    this.lines.push(...parts);
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.lines.length < waiter.count) return true;
      waiter.resolve(this.lines.slice());
      return false;
    });
  }

  #end(): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    for (const waiter of this.#waiters) waiter.reject(this.#shortError(waiter.count));
    this.#waiters = [];
  }

  #shortError(count: number): Error {
    return new Error(`${this.label} ended after ${this.lines.length} of ${count} lines: ${JSON.stringify(this.lines.slice(-5))}`);
  }
}

/** Collects all the text of a stream (e.g. a child's stderr) and awaits a pattern. */
export class TextCollector {
  text = '';
  #waiters: { pattern: RegExp; resolve: () => void }[] = [];

  constructor(stream: Readable) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      this.#waiters = this.#waiters.filter((waiter) => {
        if (!waiter.pattern.test(this.text)) return true;
        waiter.resolve();
        return false;
      });
    });
  }

  /** Resolves once the collected text matches `pattern`. */
  waitFor(pattern: RegExp): Promise<void> {
    if (pattern.test(this.text)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ pattern, resolve }));
  }
}

/** Writes each item as one NDJSON line (strings as they are, anything else JSON-encoded). */
export function writeLines(stream: Writable, ...items: unknown[]): void {
  stream.write(items.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)) + '\n').join(''));
}

/** How a spawned process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned fixture program with its stdout lines and stderr text collected. */
export interface FixtureProcess {
  readonly child: ChildProcess;
  readonly stdout: LineCollector;
  readonly stderr: TextCollector;
  readonly exited: Promise<Exit>;
  /** Writes each item as one line to the child's stdin. */
  send(...items: unknown[]): void;
  /** Ends the child's stdin and awaits its exit; kills it if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<Exit>;
}

const live = new Set<FixtureProcess>();

/** The argv that runs a fixture in spec/fixtures/ under ts-node (transpile only). */
export function fixtureArgs(fixture: string, args: readonly string[] = []): string[] {
  return ['-r', 'ts-node/register/transpile-only', join(PROJECT_ROOT, 'spec', 'fixtures', `${fixture}.ts`), ...args];
}

/** The environment for fixtures: this process's, minus `ACP_WIRE_LOG`, plus `env`. */
export function fixtureEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.ACP_WIRE_LOG;
  return { ...base, ...env };
}

/** Spawns `spec/fixtures/<fixture>.ts` with its stdio piped. Stop it with `stop()` or {@link stopAll}. */
export function spawnFixture(fixture: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): FixtureProcess {
  const child = spawn(process.execPath, fixtureArgs(fixture, args), {
    cwd: PROJECT_ROOT,
    env: fixtureEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const fixtureProcess: FixtureProcess = {
    child,
    stdout: new LineCollector(child.stdout!, `${fixture} stdout`),
    stderr: new TextCollector(child.stderr!),
    exited,
    send: (...items) => writeLines(child.stdin!, ...items),
    stop: (graceMs = 5000) => stopProcess(fixtureProcess, graceMs),
  };
  child.stdin!.on('error', () => {}); // EPIPE once the child has exited
  live.add(fixtureProcess);
  void exited.then(() => live.delete(fixtureProcess));
  return fixtureProcess;
}

async function stopProcess(fixture: FixtureProcess, graceMs: number): Promise<Exit> {
  const { child } = fixture;
  if (child.exitCode === null && child.signalCode === null) {
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    try {
      return await fixture.exited;
    } finally {
      clearTimeout(timer);
    }
  }
  return fixture.exited;
}

/** Stops every fixture process still running (for `after` hooks). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((fixture) => fixture.stop(2000)));
}

/** Spawns `echo-peer --tcp 0` and resolves with the process and the port it printed. */
export async function spawnTcpEchoPeer(env: NodeJS.ProcessEnv = {}): Promise<{ peer: FixtureProcess; port: number }> {
  const peer = spawnFixture('echo-peer', ['--tcp', '0'], env);
  const [line] = await peer.stdout.waitFor(1);
  const match = /^listening (\d+)$/.exec(line!);
  if (!match) throw new Error(`unexpected first line from echo-peer: ${JSON.stringify(line)}`);
  return { peer, port: Number(match[1]) };
}

/** A raw TCP socket with its incoming lines collected. */
export interface RawSocket {
  readonly socket: Socket;
  readonly lines: LineCollector;
  /** Writes each item as one line. */
  send(...items: unknown[]): void;
  /** Ends our side and resolves once the socket has closed. */
  close(): Promise<void>;
}

/** Connects a raw socket to `127.0.0.1:port`. */
export async function connectRaw(port: number): Promise<RawSocket> {
  const socket = createConnection({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  const closed = once(socket, 'close').then(() => undefined);
  return {
    socket,
    lines: new LineCollector(socket, 'raw socket'),
    send: (...items) => writeLines(socket, ...items),
    close: () => {
      socket.end();
      return closed;
    },
  };
}

/** Something that takes raw lines and whose answer lines are collected (a child's stdio, a socket). */
export interface LineExchange {
  send(...items: unknown[]): void;
  readonly lines: LineCollector;
}

/**
 * One exact-bytes claim of spec/wire.md against echo-peer: the line sent, and the one line expected
 * back (a RegExp where the `data` text is free), or `null` for "nothing is sent back".
 */
interface WireCase {
  readonly title: string;
  readonly send: string;
  readonly expect: string | RegExp | null;
}

/** A JSON string literal, escapes included. */
const JSON_STRING = String.raw`"(?:[^"\\]|\\.)*"`;

const invalidRequest = (id: string): RegExp =>
  new RegExp(String.raw`^\{"jsonrpc":"2\.0","id":${id},"error":\{"code":-32600,"message":"Invalid Request","data":${JSON_STRING}\}\}$`);

/** The error replies and silences of spec/wire.md, as exact lines. */
export const WIRE_CASES: readonly WireCase[] = [
  {
    title: 'answers a line that is not JSON with -32700 and id null',
    send: '{not json',
    expect: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
  },
  {
    title: 'answers a batch (a JSON array) with one -32600 and id null',
    send: '[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]',
    expect: invalidRequest('null'),
  },
  { title: 'answers a JSON value that is not an object with -32600 and id null', send: '42', expect: invalidRequest('null') },
  {
    title: 'answers a request whose jsonrpc is not "2.0" with -32600 and its id',
    send: '{"jsonrpc":"1.0","id":7,"method":"echo"}',
    expect: invalidRequest('7'),
  },
  {
    title: 'answers a request whose method is not a string with -32600 and its id',
    send: '{"jsonrpc":"2.0","id":"m","method":42}',
    expect: invalidRequest('"m"'),
  },
  {
    title: 'answers a request whose id is an object with -32600 and id null',
    send: '{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}',
    expect: invalidRequest('null'),
  },
  {
    title: 'answers a request whose params are a string with -32600 and its id',
    send: '{"jsonrpc":"2.0","id":8,"method":"echo","params":"x"}',
    expect: invalidRequest('8'),
  },
  {
    title: 'answers an unknown method with -32601 and data naming the method',
    send: '{"jsonrpc":"2.0","id":10,"method":"no/such"}',
    expect: '{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"Method not found","data":"no/such"}}',
  },
  {
    title: 'answers a handler that throws an RpcError with exactly its code, message and data',
    send: '{"jsonrpc":"2.0","id":11,"method":"throw","params":{"code":-32042,"message":"Custom","data":{"x":[1,null]}}}',
    expect: '{"jsonrpc":"2.0","id":11,"error":{"code":-32042,"message":"Custom","data":{"x":[1,null]}}}',
  },
  {
    title: 'answers a handler that throws a plain Error with -32603 and a string data',
    send: '{"jsonrpc":"2.0","id":12,"method":"throwPlain","params":{"message":"boom"}}',
    expect: /^\{"jsonrpc":"2\.0","id":12,"error":\{"code":-32603,"message":"Internal error","data":"[^"]*boom[^"]*"\}\}$/,
  },
  {
    title: 'skips blank lines and accepts a line ended by CRLF',
    send: ' \t\r\n\n{"jsonrpc":"2.0","id":"crlf","method":"echo","params":[1]}\r',
    expect: '{"jsonrpc":"2.0","id":"crlf","result":[1]}',
  },
  { title: 'sends nothing for an unhandled notification', send: '{"jsonrpc":"2.0","method":"no/such","params":{}}', expect: null },
  {
    title: 'sends nothing for a $/cancel_request naming an unknown id',
    send: '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"unknown"}}',
    expect: null,
  },
  {
    title: 'sends nothing for a response whose id matches no request',
    send: '{"jsonrpc":"2.0","id":404,"result":"stray"}',
    expect: null,
  },
  {
    title: 'sends nothing for a malformed response (both result and error)',
    send: '{"jsonrpc":"2.0","id":405,"result":1,"error":{"code":1,"message":"x"}}',
    expect: null,
  },
];

/** Request lines with ids of every kind, and the exact answer echo-peer's `echo` gives each. */
export const ID_CASES: readonly { readonly id: string; readonly send: string; readonly expect: string }[] = [
  ['"abc"', '"abc"'],
  ['""', 'an empty string'],
  ['"1"', 'the string "1"'],
  ['0', 'zero'],
  ['-5', 'a negative number'],
  ['1.5', 'a fraction'],
  ['9007199254740991', 'the largest safe integer'],
  ['null', 'null'],
].map(([id, what]) => ({
  id: what!,
  send: `{"jsonrpc":"2.0","id":${id},"method":"echo","params":{"id":${id}}}`,
  expect: `{"jsonrpc":"2.0","id":${id},"result":{"id":${id}}}`,
}));

let sentinels = 0;

/** Sends `line` then a sentinel echo; resolves with the lines answered before the sentinel's answer. */
export async function answersBefore(exchange: LineExchange, line: string): Promise<string[]> {
  const id = `sentinel-${++sentinels}`;
  const start = exchange.lines.lines.length;
  exchange.send(line, { jsonrpc: '2.0', id, method: 'echo', params: [id] });
  for (let count = start + 1; ; count++) {
    const lines = await exchange.lines.waitFor(count);
    if (!lines.at(-1)!.includes(`"id":"${id}"`)) continue;
    expect(lines.at(-1)).to.equal(`{"jsonrpc":"2.0","id":"${id}","result":["${id}"]}`);
    return lines.slice(start, -1);
  }
}

/** Defines one `it` per {@link WIRE_CASES} and {@link ID_CASES} entry against echo-peer. */
export function itAnswersAsWireMdSays(exchange: () => LineExchange): void {
  for (const wireCase of WIRE_CASES) {
    it(wireCase.title, async () => {
      const lines = await answersBefore(exchange(), wireCase.send);
      if (wireCase.expect === null) return void expectLines(lines, []);
      expectLines(lines, [wireCase.expect]);
    });
  }
  for (const idCase of ID_CASES) {
    it(`echoes ${idCase.id} as the id of the answer, byte for byte`, async () => {
      expectLines(await answersBefore(exchange(), idCase.send), [idCase.expect]);
    });
  }
}

function expectLines(lines: string[], expected: (string | RegExp)[]): void {
  expect(lines).to.have.length(expected.length, `answer lines: ${JSON.stringify(lines)}`);
  expected.forEach((line, i) => {
    if (typeof line === 'string') expect(lines[i]).to.equal(line);
    else expect(lines[i]).to.match(line);
  });
}
