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
import { LineSplitter } from './line-splitter';
import { idKey, isResponseLine, type LineDirection, readWireLine, type WireLine } from './wire-line';

/** How {@link AgentProcess.spawn} starts the agent. */
export interface AgentProcessOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** The process's name in the run (`agent-3`), for {@link WireLine.process}. */
  readonly label: string;
  /** Milliseconds since the run began, for {@link WireLine.at}. */
  readonly clock: () => number;
  /** The id of the check under way, for {@link WireLine.check}. */
  readonly checkOf: () => string;
  /** Called with every line in, out and on stderr, and every event, as it happens (the evidence trace). */
  readonly onLine?: (line: WireLine) => void;
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
  /** The line as written, once its `\n` has been (for evidence). */
  line?: WireLine;
}

/** Bytes of stderr kept (the last ones), for messages. */
const STDERR_KEPT = 16 * 1024;

type Waiter = { matches: (line: WireLine) => boolean; resolve: (line: WireLine | undefined) => void };

/** One spawned agent and the raw lines it exchanged with the check. */
export class AgentProcess {
  /** Every line received on stdout, in order. */
  readonly lines: WireLine[] = [];
  /** Every line in, out and on stderr, and every event, in order. */
  readonly transcript: WireLine[] = [];
  /** Responses that answer no request the check sent (or carry no id). */
  readonly strays: WireLine[] = [];
  /** Requests the check sent, by {@link idKey} of their id. */
  readonly sent = new Map<string, SentLine>();
  /**
   * Answers a request the process sent before the default answers do (a permission granted, else
   * `-32601`): returns true when it handled it (answered, or keeps it to answer later).
   */
  requestHandler: ((line: WireLine) => boolean) | undefined;
  readonly #tree: ProcessTree;
  readonly #options: AgentProcessOptions;
  readonly #requests: AgentRequests;
  #waiters: Waiter[] = [];
  readonly #stdout = new LineSplitter();
  readonly #stdin = new LineSplitter();
  readonly #stderrLines = new LineSplitter();
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
      for (const line of this.#stderrLines.push(chunk)) this.#record(line, 'err');
    });
    child.stderr!.once('end', () => {
      for (const line of this.#stderrLines.end()) this.#record(line, 'err');
    });
    child.stdin!.on('error', () => {
      // EPIPE once the agent has gone: what it did is what the checks look at.
    });
    this.#note(child.pid === undefined ? 'spawning' : `started: pid ${child.pid}`);
    void tree.exited.then((exit) => {
      this.#exit = exit;
      this.#note(exit.error ? `could not start: ${exit.error.message}` : `exited: ${exit.signal ?? `code ${exit.code}`}`);
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

  /** Writes `text` as it is (no newline added); returns the lines it completed (each recorded as written). */
  writeRaw(text: string | Buffer): WireLine[] {
    const stdin = this.#tree.child.stdin!;
    if (!stdin.writable) return [];
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    stdin.write(bytes);
    return this.#stdin.push(bytes).map((line) => this.#record(line, 'out'));
  }

  /** Writes one JSON message and its `\n`; returns the line as written. */
  writeLine(message: JsonObject): WireLine | undefined {
    return this.writeRaw(`${encodeJson(message)}\n`)[0];
  }

  /**
   * Sends a request; `rawId` (the id's JSON text, written as is) defaults to the run's next number.
   * `terminator` ends the line (`\n`; `\r\n` to check that CRLF is tolerated).
   */
  request(method: string, params?: JsonValue, rawId?: string, terminator = '\n'): SentLine {
    const id = rawId ?? String(this.#options.nextId());
    const members = params === undefined ? '' : `,"params":${encodeJson(params)}`;
    const text = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}${members}}`;
    const sent = this.track(id, method);
    sent.line = this.writeRaw(`${text}${terminator}`)[0];
    return sent;
  }

  /**
   * Registers a request the caller writes itself (with {@link AgentProcess.writeRaw}, in pieces if
   * it likes): `rawId` is its id's text.
   */
  track(rawId: string, method: string): SentLine {
    const sent: SentLine = { rawId, method, answers: [] };
    this.sent.set(idKey(rawId), sent);
    return sent;
  }

  /** Answers the request of the process whose id's text is `rawId` (written as it is) with a result or an error object. */
  respond(rawId: string, outcome: { result: JsonValue } | { error: JsonObject }): WireLine | undefined {
    return this.writeRaw(`{"jsonrpc":"2.0","id":${rawId},${encodeJson(outcome).slice(1)}\n`)[0];
  }

  /** Sends a notification; returns the line as written. */
  notify(method: string, params?: JsonValue): WireLine | undefined {
    return this.writeLine(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
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

  /**
   * Resolves with the first line received since `lines[from]` that `matches` (one received already,
   * or the next), or `undefined` after `ms` or once stdout ends.
   */
  lineAfter(from: number, matches: (line: WireLine) => boolean, ms: number): Promise<WireLine | undefined> {
    const found = this.lines.slice(from).find(matches);
    return found ? Promise.resolve(found) : this.nextLine(matches, ms);
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
    for (const bytes of this.#stdout.push(chunk)) this.#onLine(bytes);
  }

  #onOutputEnd(): void {
    if (this.#isOutputEnded) return;
    for (const bytes of this.#stdout.end()) this.#onLine(bytes);
    this.#isOutputEnded = true;
    this.#note('stdout ended');
    for (const waiter of [...this.#waiters]) waiter.resolve(undefined);
  }

  #onLine(bytes: Buffer): void {
    const line = this.#record(bytes, 'in');
    this.lines.push(line);
    if (isResponseLine(line)) this.#onResponse(line);
    else if (line.message !== undefined && typeof line.message.method === 'string' && line.message.id !== undefined) {
      if (!this.requestHandler?.(line)) this.#requests.answer(line.message);
    }
    for (const waiter of [...this.#waiters]) if (waiter.matches(line)) waiter.resolve(line);
  }

  /** Records one line of `direction` (its bytes without the `\n`) in the transcript, and reports it. */
  #record(bytes: Buffer, direction: LineDirection): WireLine {
    const { label, clock, checkOf, onLine } = this.#options;
    const line = readWireLine(bytes, clock(), { direction, process: label, check: checkOf() });
    this.transcript.push(line);
    onLine?.(line);
    return line;
  }

  /** Records an event of the process (started, stdout ended, exited). */
  #note(text: string): void {
    this.#record(Buffer.from(text, 'utf8'), 'event');
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
