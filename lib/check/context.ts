/**
 * What a check runs with: the agents it may start (the group's shared, initialized one, or one of
 * its own), the bounds of its waits, the official schema, and the steps most checks share
 * (initialize, a ping, a session).
 *
 * @packageDocumentation
 */
import type { JsonObject, JsonValue } from '../jsonrpc/message';
import { AgentProcess } from './agent-process';
import { type CheckGroup, CheckFailure, fail, notApplicable } from './outcome';
import { PROXY_INITIALIZE_METHOD } from '../jsonrpc/protocol';
import { RULES } from './rules';
import { playSuccessorAndClient } from './successor-peer';
import { AcpSchema } from './schema';
import { shortText, type WireLine } from './wire-line';

/** The bounds and switches of a run, resolved (see `CheckOptions`). */
export interface CheckSettings {
  /** The program and arguments of the process under check. */
  readonly argv: readonly string[];
  /**
   * What it is: an `agent` (initialized with `initialize`), or a `proxy` (initialized with
   * `proxy/initialize`; the check plays its conductor, successor and client).
   */
  readonly role: 'agent' | 'proxy';
  /** The agent's working directory. */
  readonly cwd: string;
  /** The `cwd` of the sessions the checks open (absolute). */
  readonly sessionCwd: string;
  readonly env: NodeJS.ProcessEnv | undefined;
  /** How long to wait for an answer, or for a turn to end. */
  readonly timeoutMs: number;
  /** How long an agent has to exit once its stdin ends (and its tree to end after that). */
  readonly exitTimeoutMs: number;
  /** How long a cancelled turn has to end. */
  readonly cancelTimeoutMs: number;
  /** How long silence must last to show that nothing more comes (no answer to a notification). */
  readonly quietMs: number;
  /** Whether the agent can run turns (false: the turn checks are `n/a`). */
  readonly canRunTurns: boolean;
  /** How long the whole run may take, the ending of its processes included. */
  readonly deadlineMs: number;
  /** Lets the turns a fake model holds open go on (with `--model-stub`): the agent writes again. */
  readonly finishHeldTurns?: () => void;
}

/** A method no agent has, to see how unknown requests are answered (and to ping). */
export const UNKNOWN_METHOD = 'acp-wire/check-unknown-method';

/** How long a stopped run's agents have to exit at their stdin's end before SIGTERM (and then SIGKILL). */
const HURRIED_CLOSE_MS = 200;

/**
 * How long an agent the checks are done with has to exit at its stdin's end before SIGTERM: how it
 * exits is the lifecycle checks' business, which wait `exitTimeoutMs` themselves.
 */
const DONE_CLOSE_MS = 500;

/** The client's name in `initialize`. */
const CLIENT_INFO: JsonObject = { name: 'acp-wire-check', version: '1' };

/** `initialize` params offering `version`, readable by a v1 and a v2 agent alike (each schema allows the other's fields). */
export function initializeParams(version: number): JsonObject {
  return {
    protocolVersion: version,
    info: CLIENT_INFO,
    capabilities: {},
    clientInfo: CLIENT_INFO,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  };
}

/** The state a run keeps between checks, and what each check is given. */
export class CheckContext {
  readonly settings: CheckSettings;
  readonly schema = new AcpSchema();
  /** Every agent process the run started, in order. */
  readonly processes: AgentProcess[] = [];

  /** The run's participants: its processes. */
  get participants(): readonly AgentProcess[] {
    return this.processes;
  }
  /** What one check leaves for a later one (by the later one's id). */
  readonly memo = new Map<string, unknown>();
  readonly #clock: () => number;
  readonly #onLine: ((line: WireLine) => void) | undefined;
  #check = 'preflight';
  #nextId = 0;
  #shared: { group: CheckGroup; process: AgentProcess; ready: Promise<AgentProcess> } | undefined;
  #own: AgentProcess[] = [];
  #kept: AgentProcess[] = [];
  #group: CheckGroup = 'framing';
  #closeTimeoutMs: number;
  /** The longest a process of this run took to answer its first `initialize` (its start-up). */
  #startupMs = 0;

  /** `onLine` is called with every line in, out and on stderr of every process, and their events (the evidence trace). */
  constructor(settings: CheckSettings, clock: () => number, onLine?: (line: WireLine) => void) {
    this.settings = settings;
    this.#clock = clock;
    this.#onLine = onLine;
    this.#closeTimeoutMs = Math.min(settings.exitTimeoutMs, DONE_CLOSE_MS);
  }

  /** The run is stopped: agents still running get SIGTERM at once when they are closed, not after `exitTimeoutMs`. */
  hurry(): void {
    this.#closeTimeoutMs = Math.min(this.#closeTimeoutMs, HURRIED_CLOSE_MS);
  }

  /** The id of the check under way (`preflight` before the first): every line seen is tagged with it. */
  get currentCheck(): string {
    return this.#check;
  }

  /** Marks the start of the check `id` (for the lines' tags). */
  beginCheck(id: string): void {
    this.#check = id;
  }

  /** Marks the start of a check of `group` (the shared agent belongs to one group). */
  async enterGroup(group: CheckGroup): Promise<void> {
    if (this.#shared && this.#shared.group !== group) await this.closeShared();
    this.#group = group;
  }

  /**
   * The current group's agent, initialized with an offer of {@link CheckContext.offer} (started on
   * first use, and again after one that died or failed to initialize: that one is ended with the group).
   *
   * @throws CheckFailure when `initialize` is not answered with a result
   */
  async agent(): Promise<AgentProcess> {
    if (this.#shared) {
      const agent = await this.#shared.ready.catch(() => undefined);
      if (agent && !agent.isOutputEnded) return agent;
      this.#kept.push(this.#shared.process);
      this.#shared = undefined;
    }
    const process = this.#start();
    const ready = this.#initialized(process);
    this.#shared = { group: this.#group, process, ready };
    return ready;
  }

  /** The group's shared agent process, initialized or not (undefined before the first {@link CheckContext.agent}). */
  get sharedProcess(): AgentProcess | undefined {
    return this.#shared?.process;
  }

  /** Starts an agent for the current check only (not initialized); it is ended when the check ends. */
  spawn(): AgentProcess {
    const agent = this.#start();
    this.#own.push(agent);
    return agent;
  }

  /** Keeps an agent the current check started running until its group ends (for the group's next check). */
  keepForGroup(agent: AgentProcess): void {
    this.#own = this.#own.filter((other) => other !== agent);
    this.#kept.push(agent);
  }

  /** Ends the agents the current check started. */
  async closeOwn(): Promise<void> {
    const own = this.#own;
    this.#own = [];
    await Promise.all(own.map((agent) => agent.close(this.#closeTimeoutMs)));
  }

  /** Ends the group's agents: the shared one (whether its `initialize` succeeded or not), and those kept for the group. */
  async closeShared(): Promise<void> {
    const shared = this.#shared?.process;
    const kept = this.#kept;
    this.#shared = undefined;
    this.#kept = [];
    await Promise.all([...kept, ...(shared ? [shared] : [])].map((each) => each.close(this.#closeTimeoutMs)));
  }

  /** Ends every process the run started that may still run (each one's whole process group). */
  async closeAll(): Promise<void> {
    this.#shared = undefined;
    this.#own = [];
    this.#kept = [];
    await Promise.all(this.processes.map((each) => each.close(this.#closeTimeoutMs)));
  }

  /**
   * Sends `initialize` offering `version` and waits for its answer.
   *
   * @remarks The first request of a process just started waits `timeoutMs` plus the longest start-up
   * seen in this run so far (the time a process took to answer its first `initialize`; none before
   * the first answer): a slow starter on a busy machine is not taken for one that does not answer.
   * @throws CheckFailure when there is none within that time
   */
  async initialize(agent: AgentProcess, version: number): Promise<WireLine> {
    const method = this.settings.role === 'proxy' ? PROXY_INITIALIZE_METHOD : 'initialize';
    if (agent.sent.size > 0) return this.expectAnswer(agent, method, initializeParams(version));
    const start = this.#clock();
    const answer = await this.expectAnswer(agent, method, initializeParams(version), this.settings.timeoutMs + this.#startupMs);
    this.#startupMs = Math.max(this.#startupMs, this.#clock() - start);
    return answer;
  }

  /**
   * Sends a request and returns its answer.
   *
   * @param waitMs - how long to wait for it (default `timeoutMs`)
   * @throws CheckFailure (`fail`) when there is none within `waitMs`, naming the request and the agent's state
   */
  async expectAnswer(agent: AgentProcess, method: string, params?: JsonValue, waitMs = this.settings.timeoutMs): Promise<WireLine> {
    const line = await agent.call(method, params, waitMs);
    if (line) return line;
    await this.settle(agent);
    throw new CheckFailure(fail(`no answer to ${method}${this.#within(agent, waitMs)}${stateOf(agent)}`, RULES.alwaysAnswered));
  }

  /**
   * Checks that the agent still serves: a request of an unknown method gets an answer.
   *
   * @throws CheckFailure (`fail`) when it gets none, with `after` saying after what
   */
  async expectServing(agent: AgentProcess, after: string): Promise<void> {
    const line = await agent.call(UNKNOWN_METHOD, undefined, this.settings.timeoutMs);
    if (!line)
      throw new CheckFailure(
        fail(
          `stopped serving after ${after}: no answer to a request within ${this.settings.timeoutMs} ms${stateOf(agent)}`,
          RULES.alwaysAnswered,
        ),
      );
  }

  /** The negotiated protocol version of an agent (from its `initialize` answer), when it is 1 or 2. */
  versionOf(agent: AgentProcess): 1 | 2 | undefined {
    const version = this.memo.get(versionKey(agent));
    return version === 1 || version === 2 ? version : undefined;
  }

  /** Throws `n/a` unless the agent can run turns. */
  requireTurns(): void {
    if (!this.settings.canRunTurns) throw new CheckFailure(notApplicable('turns are not run (--no-turns)'));
  }

  /**
   * Once an agent's stdout has ended, waits (up to `exitTimeoutMs`) for its exit to be known, so
   * that a message can say how it ended; resolves at once while its stdout is open.
   */
  async settle(agent: AgentProcess): Promise<void> {
    if (!agent.isOutputEnded || agent.exit) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.settings.exitTimeoutMs)));
    await Promise.race([agent.exited, bound]);
    clearTimeout(timer);
  }

  /** Resolves after `ms` (a bounded pause of a check: silence that proves something). */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** ` within N ms`, unless the agent's stdout has ended (then no wait was the reason). */
  #within(agent: AgentProcess, waitMs: number): string {
    return agent.isOutputEnded ? '' : ` within ${waitMs} ms`;
  }

  #start(): AgentProcess {
    const [command, ...args] = this.settings.argv;
    const agent = AgentProcess.spawn(command!, args, {
      cwd: this.settings.cwd,
      env: this.settings.env,
      clock: this.#clock,
      label: `agent-${this.processes.length + 1}`,
      checkOf: () => this.#check,
      onLine: this.#onLine,
      nextId: () => ++this.#nextId,
    });
    if (this.settings.role === 'proxy') playSuccessorAndClient(agent);
    this.processes.push(agent);
    return agent;
  }

  /**
   * The version the current group offers: 1 where turns run (the turn checks speak the stable ACP
   * v1, where a turn ends with the prompt's answer), 2 elsewhere.
   */
  get offer(): 1 | 2 {
    return this.#group === 'sessions' || this.#group === 'lifecycle' ? 1 : 2;
  }

  async #initialized(agent: AgentProcess): Promise<AgentProcess> {
    const answer = await this.initialize(agent, this.offer);
    const result = answer.message?.result as JsonObject | undefined;
    if (result === undefined) throw new CheckFailure(fail(`initialize was answered with an error: ${shortText(answer.text)}`));
    this.memo.set(versionKey(agent), result.protocolVersion);
    return agent;
  }

  /** Records the version an agent's `initialize` answer negotiated. */
  noteVersion(agent: AgentProcess, answer: WireLine): void {
    const result = answer.message?.result as JsonObject | undefined;
    if (result !== undefined) this.memo.set(versionKey(agent), result.protocolVersion);
  }
}

const versionKey = (agent: AgentProcess): string => `version:${agent.pid ?? -1}`;

/** `: it exited (code 1); stderr: …`, or `` while it runs. */
export function stateOf(agent: AgentProcess): string {
  const exit = agent.exit;
  const excerpt = stderrExcerpt(agent);
  const stderr = excerpt === '' ? '' : `; stderr: ${excerpt}`;
  if (exit?.error) return `: it could not start (${exit.error.message})`;
  if (exit) return `: it exited (${exit.signal ?? `code ${exit.code}`})${stderr}`;
  if (agent.isOutputEnded) return `: its stdout ended${stderr}`;
  return '';
}

/** What an agent's stderr says about its end: its last line naming an error (its last lines otherwise), shortened. */
export function stderrExcerpt(agent: AgentProcess): string {
  const lines = agent.stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const error = lines.findLast((line) => /^\w*Error\b/.test(line));
  // Its cause, when the error line does not say it (`Internal error: {` and the data below).
  const cause = lines.findLast((line) => /EPIPE|Broken pipe|\bE[A-Z]{3,}\b/.test(line));
  if (error === undefined) return shortText(cause ?? lines.slice(-3).join(' | '));
  if (cause === undefined || error.includes(cause) || /EPIPE|Broken pipe/.test(error)) return shortText(error);
  return shortText(`${error} … ${cause}`);
}
