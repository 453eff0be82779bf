/**
 * An `AcpAgent` under test in process, spoken to with raw JSON-RPC lines: what the ACP v2 session
 * baseline specs send and read, with every ACP message the agent writes validated against the
 * schema of the negotiated version.
 */
import { expect } from 'chai';
import { AcpAgent, type AcpAgentOptions, type AgentTurn } from '../../lib';
import { agentLineErrors } from './acp-schema';
import { RawPeer } from './peers';

/** One JSON-RPC message as read back. */
export type Wire = Record<string, unknown> & { id?: unknown; method?: string; params?: Record<string, unknown>; result?: unknown };

/** A `session/update`'s `update`. */
export type Update = Record<string, unknown> & { sessionUpdate: string };

/** The agent under test and the raw client side. */
export class AgentUnderTest {
  readonly peer: RawPeer;
  readonly agent: AcpAgent;
  #nextId = 1;
  #version: 1 | 2 = 2;
  readonly #methodOf = new Map<unknown, string>();

  constructor(options: Partial<AcpAgentOptions> = {}) {
    this.peer = new RawPeer();
    this.agent = new AcpAgent(this.peer.connection, { info: { name: 'baseline-agent', version: '1.0.0' }, prompt: echo, ...options });
  }

  /** Sends `initialize` requesting `version`; resolves with its result. */
  async initialize(version: 1 | 2 = 2): Promise<Record<string, unknown>> {
    this.#version = version;
    return this.result('initialize', { protocolVersion: version, info: { name: 'spec', version: '1' } });
  }

  /** Sends a request; resolves with its whole answer (result or error), schema-checked. Takes the lines up to it. */
  async call(method: string, params: unknown = {}): Promise<Wire> {
    const id = this.send(method, params);
    const lines = await this.peer.out.takeUntil((m) => m.id === id);
    const message = JSON.parse(lines[lines.length - 1]!) as Wire;
    this.#check(message);
    return message;
  }

  /** {@link call}, expecting a result. */
  async result<T = Record<string, unknown>>(method: string, params: unknown = {}): Promise<T> {
    const answer = await this.call(method, params);
    expect(answer, JSON.stringify(answer)).to.have.property('result');
    return answer.result as T;
  }

  /** {@link call}, expecting an error; resolves with its code. */
  async errorCode(method: string, params: unknown = {}): Promise<number> {
    const answer = await this.call(method, params);
    expect(answer, JSON.stringify(answer)).to.have.property('error');
    return (answer.error as { code: number }).code;
  }

  /** Sends a request without waiting; returns its id. */
  send(method: string, params: unknown = {}): number {
    const id = this.#nextId++;
    this.#methodOf.set(id, method);
    this.peer.send({ jsonrpc: '2.0', id, method, params });
    return id;
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.peer.send({ jsonrpc: '2.0', method, params });
  }

  /** Starts a session in `cwd`; resolves with its id. */
  async newSession(cwd = '/work'): Promise<string> {
    return (await this.result<{ sessionId: string }>('session/new', { cwd, mcpServers: [] })).sessionId;
  }

  /** Every line read so far, as messages. */
  get messages(): Wire[] {
    return this.peer.out.lines.map((line) => JSON.parse(line) as Wire);
  }

  /** The `update`s of `session/update`s of `sessionId` among `messages`, in order. */
  updatesOf(sessionId: string, messages: readonly Wire[] = this.messages): Update[] {
    return messages
      .filter((m) => m.method === 'session/update' && m.params?.sessionId === sessionId)
      .map((m) => m.params!.update as Update);
  }

  /** Resolves with the lines up to (and with) the first idle `state_update` of `sessionId` from now on. */
  async untilIdle(sessionId: string): Promise<Wire[]> {
    const lines = await this.peer.out.takeUntil((_, line) => line.includes('"state":"idle"') && line.includes(sessionId));
    return lines.map((line) => JSON.parse(line) as Wire);
  }

  /** Closes both sides. */
  close(): Promise<void> {
    return this.peer.close();
  }

  #check(message: Wire): void {
    const method = this.#methodOf.get(message.id);
    if (method === undefined || method.startsWith('_')) return;
    const errors = agentLineErrors(JSON.stringify(message), method, this.#version);
    expect(errors, `${method} answer ${JSON.stringify(message)}`).to.deep.equal([]);
  }
}

/** The default turn: one chunk "echo: <text>", then `end_turn`. */
export function echo(turn: AgentTurn): 'end_turn' {
  const text = turn.prompt.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
  turn.sendText(`echo: ${text}`);
  return 'end_turn';
}

/** A turn that runs until its signal aborts, then ends (after sending one last chunk). */
export function untilCancelled(turn: AgentTurn): Promise<'end_turn'> {
  turn.sendText('working');
  return new Promise((resolve) =>
    turn.signal.addEventListener('abort', () => {
      turn.sendText('stopped');
      resolve('end_turn');
    }),
  );
}

/** The prompt params of a text prompt. */
export function textPrompt(sessionId: string, text: string, meta?: Record<string, unknown>): Record<string, unknown> {
  return { sessionId, prompt: [{ type: 'text', text }], ...(meta ? { _meta: meta } : {}) };
}
