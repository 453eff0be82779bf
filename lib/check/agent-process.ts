/**
 * The agent (or proxy) under check as a process and a raw line client of it ({@link LineClient}):
 * its stdin and stdout carry the lines, its stderr and its exit are recorded, and its whole process
 * tree is ended.
 *
 * @packageDocumentation
 */
import { spawnProcessTree, type ChildExit, type ProcessTree } from '../transports/process-tree';
import { LineClient, type LineClientOptions } from './line-client';
import { LineSplitter } from './line-splitter';

export { paramsOf, type SentLine } from './line-client';

/** How {@link AgentProcess.spawn} starts the agent. */
export interface AgentProcessOptions extends LineClientOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Bytes of stderr kept (the last ones), for messages. */
const STDERR_KEPT = 16 * 1024;

/** One spawned agent and the raw lines it exchanged with the check. */
export class AgentProcess extends LineClient {
  readonly #tree: ProcessTree;
  readonly #stdout = new LineSplitter();
  readonly #stderrLines = new LineSplitter();
  #stderr = '';
  #exit: ChildExit | undefined;

  private constructor(tree: ProcessTree, options: AgentProcessOptions) {
    super(options);
    this.#tree = tree;
    const { child } = tree;
    child.stdout!.on('data', (chunk: Buffer) => {
      for (const bytes of this.#stdout.push(chunk)) this.receive(bytes);
    });
    child.stdout!.once('end', () => this.#onOutputEnd());
    child.stdout!.once('error', () => this.#onOutputEnd());
    child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
      for (const line of this.#stderrLines.push(chunk)) this.record(line, 'err');
    });
    child.stderr!.once('end', () => {
      for (const line of this.#stderrLines.end()) this.record(line, 'err');
    });
    child.stdin!.on('error', () => {
      // EPIPE once the agent has gone: what it did is what the checks look at.
    });
    this.note(child.pid === undefined ? 'spawning' : `started: pid ${child.pid}`);
    void tree.exited.then((exit) => {
      this.#exit = exit;
      this.note(exit.error ? `could not start: ${exit.error.message}` : `exited: ${exit.signal ?? `code ${exit.code}`}`);
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

  /** The last lines of its stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  /** The process group of the agent (outside Windows): to tell whether anything of it still runs. */
  get tree(): ProcessTree {
    return this.#tree;
  }

  protected transmit(bytes: Buffer): boolean {
    const stdin = this.#tree.child.stdin!;
    if (!stdin.writable) return false;
    stdin.write(bytes);
    return true;
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

  #onOutputEnd(): void {
    if (this.isOutputEnded) return;
    for (const bytes of this.#stdout.end()) this.receive(bytes);
    this.endOutput('stdout ended');
  }
}
