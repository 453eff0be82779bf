/**
 * Forks bench programs and talks to them over IPC, one command at a time.
 *
 * @packageDocumentation
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { WorkerCommand, WorkerReply } from './worker';

/** A forked worker that answers one command at a time. */
export class WorkerProcess {
  readonly #child: ChildProcess;
  readonly #exited: Promise<unknown>;
  #waiter: ((reply: WorkerReply) => void) | undefined;
  #ready: Promise<WorkerReply>;

  /**
   * @param script - a program under `dist/bench/` (e.g. `worker.js`)
   * @param args - its arguments
   * @param env - extra environment variables
   * @param nodeFlags - node flags (e.g. `--expose-gc`)
   */
  constructor(script: string, args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []) {
    this.#child = fork(join(__dirname, script), args, {
      env: { ...process.env, ...env },
      execArgv: nodeFlags,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#exited = once(this.#child, 'exit');
    this.#ready = this.#next();
    this.#child.on('message', (reply: WorkerReply) => {
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter?.(reply);
    });
    this.#child.once('exit', (code) => {
      this.#waiter?.({ type: 'failed', message: `${script} ${args.join(' ')} exited with code ${String(code)}` });
    });
  }

  /** Resolves with the first message the program sends (its `ready`). @throws Error if it failed to start */
  async ready(): Promise<WorkerReply> {
    return checked(await this.#ready);
  }

  /** Sends one command and resolves with the reply. @throws Error if the program reports a failure */
  async send(command: WorkerCommand): Promise<WorkerReply> {
    const reply = this.#next();
    this.#child.send(command);
    return checked(await reply);
  }

  /** Resolves once the program has exited. */
  async exited(): Promise<void> {
    await this.#exited;
  }

  #next(): Promise<WorkerReply> {
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }
}

function checked(reply: WorkerReply): WorkerReply {
  if (reply.type === 'failed') throw new Error(reply.message);
  return reply;
}

/**
 * Forks a one-shot program (`memory.js`, `soak.js`, `framing.js`) and resolves with the one
 * result it sends.
 */
export async function runOnce<T>(script: string, args: string[], nodeFlags: string[] = []): Promise<T> {
  const child = fork(join(__dirname, script), args, { execArgv: nodeFlags, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  const [message] = (await Promise.race([
    once(child, 'message'),
    exited.then(([code]) => Promise.reject(new Error(`${script} exited with code ${String(code)}`))),
  ])) as [T];
  await exited;
  return message;
}
