/**
 * The agent under check as a process and a raw line client of it: writes exact bytes to its stdin,
 * reads its stdout line by line without hiding anything (non-JSON lines, answers to nothing,
 * duplicate answers), answers the agent's own requests, and ends its process tree.
 *
 * @packageDocumentation
 */
import { encodeJson } from '../framing/ndjson';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';
import { spawnProcessTree, type ChildExit, type ProcessTree } from '../transports/process-tree';
import { AgentRequests } from './agent-requests';
import { idKey, isResponseLine, readWireLine, type WireLine } from './wire-line';
import type { WireTap } from './wire-tap';

/** How {@link AgentProcess.spawn} starts the agent. */
export interface AgentProcessOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Milliseconds since the check began, for {@link WireLine.at}. */
  readonly clock: () => number;
  /** Where every line in and out is reported (the trace file). */
  readonly tap?: WireTap;
  /** The next request id of the run (ids are unique across the run's processes). */
  readonly nextId: () => number;
}

/** A request the check sent, and its answers. */
export interface SentLine {
  /** The id's text as written. */
  readonly rawId: string;
  readonly method: string;
  /** Every answer received for it, in order (more than one breaks JSON-RPC). */
  readonly answers: WireLine[];
}

/** Bytes of stderr kept (the last ones), for messages. */
const STDERR_KEPT = 16 * 1024;

type Waiter = { matches: (line: WireLine) => boolean; resolve: (line: WireLine | undefined) => void };

/** One spawned agent and the raw lines it exchanged with the check. */
export class AgentProcess {
  /** Every line received on stdout, in order. */
  readonly lines: WireLine[] = [];
  /** Responses that answer no request the check sent (or carry no id). */
  readonly strays: WireLine[] = [];
  /** Requests the check sent, by {@link idKey} of their id. */
  readonly sent = new Map<string, SentLine>();
  readonly #tree: ProcessTree;
  readonly #options: AgentProcessOptions;
  readonly #requests: AgentRequests;
  #waiters: Waiter[] = [];
  #pending: Buffer[] = [];
  #stderr = '';
  #isOutputEnded = false;
  #exit: ChildExit | undefined;

  private constructor(tree: ProcessTree, options: AgentProcessOptions) {
    this.#tree = tree;
    this.#options = options;
    this.#requests = new AgentRequests((line) => this.writeLine(line));
    const { child } = tree;
    child.stdout!.on('data', (chunk: Buffer) => this.#onData(chunk));
    child.stdout!.once('end', () => this.#onOutputEnd());
    child.stdout!.once('error', () => this.#onOutputEnd());
    child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    child.stdin!.on('error', () => {
      // EPIPE once the agent has gone: what it did is what the checks look at.
    });
    void tree.exited.then((exit) => {
      this.#exit = exit;
    });
  }

  /** Spawns `command` with `args` (no shell), in a process group of its own, stdio piped. */
  static spawn(command: string, args: readonly string[], options: AgentProcessOptions): AgentProcess {
    return new AgentProcess(spawnProcessTree(command, args, { cwd: options.cwd, env: options.env, stderr: 'pipe' }), options);
  }

  /** The process's pid (undefined if it could not start). */
  get pid(): number | undefined {
    return this.#tree.child.pid;
  }

  /** Resolves once the agent has exited (or could not start). */
  get exited(): Promise<ChildExit> {
    return this.#tree.exited;
  }

  /** How it exited, once it has. */
  get exit(): ChildExit | undefined {
    return this.#exit;
  }

  /** Whether its stdout has ended: nothing more will be read. */
  get isOutputEnded(): boolean {
    return this.#isOutputEnded;
  }

  /** The last lines of its stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  /** The process group of the agent (outside Windows): to tell whether anything of it still runs. */
  get tree(): ProcessTree {
    return this.#tree;
  }

  /** Writes `text` as it is (no newline added). */
  writeRaw(text: string | Buffer): void {
    const stdin = this.#tree.child.stdin!;
    if (!stdin.writable) return;
    stdin.write(text);
  }

  /** Writes one JSON message and its `\n`, and reports it to the tap. */
  writeLine(message: JsonObject): void {
    this.#options.tap?.out(message, this.#options.clock());
    this.writeRaw(`${encodeJson(message)}\n`);
  }

  /**
   * Sends a request; `rawId` (the id's JSON text, written as is) defaults to the run's next number.
   * `terminator` ends the line (`\n`; `\r\n` to check that CRLF is tolerated).
   */
  request(method: string, params?: JsonValue, rawId?: string, terminator = '\n'): SentLine {
    const id = rawId ?? String(this.#options.nextId());
    const members = params === undefined ? '' : `,"params":${encodeJson(params)}`;
    const text = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${members}}`;
    const sent = this.track(id, method, text);
    this.writeRaw(`${text}${terminator}`);
    return sent;
  }

  /**
   * Registers a request the caller writes itself (with {@link AgentProcess.writeRaw}, in pieces if
   * it likes): `rawId` is its id's text, `text` its line (reported to the tap).
   */
  track(rawId: string, method: string, text: string): SentLine {
    const sent: SentLine = { rawId, method, answers: [] };
    this.sent.set(idKey(rawId), sent);
    this.#options.tap?.out(JSON.parse(text) as JsonObject, this.#options.clock());
    return sent;
  }

  /** Sends a notification. */
  notify(method: string, params?: JsonValue): void {
    this.writeLine(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /** Resolves with the first answer to `sent` (one received already, or the next), or `undefined` after `ms`. */
  answer(sent: SentLine, ms: number): Promise<WireLine | undefined> {
    if (sent.answers.length > 0) return Promise.resolve(sent.answers[0]);
    const key = idKey(sent.rawId);
    return this.nextLine((line) => isResponseLine(line) && line.rawId !== undefined && idKey(line.rawId) === key, ms);
  }

  /** Sends a request and waits for its answer (`undefined`: none within `ms`). */
  async call(method: string, params: JsonValue | undefined, ms: number): Promise<WireLine | undefined> {
    return this.answer(this.request(method, params), ms);
  }

  /** Resolves with the next line received that `matches`, or `undefined` after `ms` or once stdout ends. */
  nextLine(matches: (line: WireLine) => boolean, ms: number): Promise<WireLine | undefined> {
    if (this.#isOutputEnded) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        matches,
        resolve: (line) => {
          clearTimeout(timer);
          this.#waiters = this.#waiters.filter((other) => other !== waiter);
          resolve(line);
        },
      };
      const timer = setTimeout(() => waiter.resolve(undefined), ms);
      this.#waiters.push(waiter);
    });
  }

  /** Ends the agent's stdin (the client has nothing more to say). */
  endInput(): void {
    this.#tree.child.stdin!.end();
  }

  /** The client stops reading: its end of the agent's stdout is closed, so the agent's next write meets a broken pipe. */
  stopReading(): void {
    this.#tree.child.stdout!.destroy();
  }

  /** Ends the agent's process tree (stdin ended, then SIGTERM and SIGKILL after `killTimeoutMs` each). */
  async close(killTimeoutMs: number): Promise<ChildExit> {
    this.endInput();
    const exit = await this.#tree.end(killTimeoutMs);
    this.#tree.child.stderr?.destroy();
    this.#tree.child.stdout?.destroy();
    return exit;
  }

  #onData(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.#pending.push(chunk.subarray(start, end));
      this.#onLine(Buffer.concat(this.#pending));
      this.#pending = [];
      start = end + 1;
    }
    if (start < chunk.length) this.#pending.push(chunk.subarray(start));
  }

  #onOutputEnd(): void {
    if (this.#isOutputEnded) return;
    if (this.#pending.length > 0) this.#onLine(Buffer.concat(this.#pending));
    this.#pending = [];
    this.#isOutputEnded = true;
    for (const waiter of [...this.#waiters]) waiter.resolve(undefined);
  }

  #onLine(bytes: Buffer): void {
    const line = readWireLine(bytes, this.#options.clock());
    this.lines.push(line);
    if (line.message !== undefined) this.#options.tap?.in(line.message, line.at);
    if (isResponseLine(line)) this.#onResponse(line);
    else if (line.message !== undefined && typeof line.message.method === 'string' && line.message.id !== undefined) {
      this.#requests.answer(line.message);
    }
    for (const waiter of [...this.#waiters]) if (waiter.matches(line)) waiter.resolve(line);
  }

  #onResponse(line: WireLine): void {
    const sent = line.rawId === undefined ? undefined : this.sent.get(idKey(line.rawId));
    if (sent) sent.answers.push(line);
    else this.strays.push(line);
  }
}

/** The `params` of a line's message, as an object (empty when absent). */
export function paramsOf(line: WireLine): JsonObject {
  const params = line.message?.params;
  return isJsonObject(params) ? params : {};
}
