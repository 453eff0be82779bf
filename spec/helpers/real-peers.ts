/**
 * Helpers for the specs that drive real ACP peers installed from npm (codex-acp, claude-code-acp,
 * acpx): where they are, a throwaway `$HOME` for each run, the text of their streams, and the
 * processes a run left behind.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { PROJECT_ROOT } from './wire';

const modules = join(PROJECT_ROOT, 'node_modules');

/** The entry points of the real peers (exact devDependencies) and of the built acp-wire pieces. */
export const REAL_PEERS = {
  /** `@zed-industries/codex-acp`'s launcher script: it starts the native binary and waits for it. */
  codexAcp: join(modules, '@zed-industries', 'codex-acp', 'bin', 'codex-acp.js'),
  /** `@zed-industries/claude-code-acp`'s agent. */
  claudeCodeAcp: join(modules, '@zed-industries', 'claude-code-acp', 'dist', 'index.js'),
  /** acpx's command line. */
  acpx: join(modules, 'acpx', 'dist', 'cli.js'),
} as const;

/** The built conductor and peers (`npm run build`). */
export const BUILT_PEERS = {
  cli: join(PROJECT_ROOT, 'dist', 'bin', 'acp-wire.js'),
  agent: join(PROJECT_ROOT, 'dist', 'examples', 'conformance-agent.js'),
  proxy: join(PROJECT_ROOT, 'dist', 'examples', 'passthrough-proxy.js'),
} as const;

/** The installed version of an npm package (from its package.json). */
export function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Throws a clear error unless the built pieces and the real peers are there. */
export function requireRealPeers(): void {
  for (const file of [...Object.values(BUILT_PEERS), ...Object.values(REAL_PEERS)]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm ci\` and \`npm run build\` first`);
  }
}

/** Quotes a word for a command line that `splitCommandLine` (and a POSIX shell) reads back as it is. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** One command line from words. */
export function commandLine(...words: string[]): string {
  return words.map(shellWord).join(' ');
}

/** A throwaway home directory: what a real peer reads and writes there stays out of the real one. */
export interface TempHome {
  readonly path: string;
  /** An environment for a peer: this process's, with `HOME` here and without the listed variables. */
  env(extra?: NodeJS.ProcessEnv, drop?: readonly string[]): NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

/** Variables of the developer's environment that would change what a real peer does. */
const PEER_VARIABLES = ['ACP_WIRE_LOG', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'CODEX_HOME', 'CODEX_API_KEY', 'ANTHROPIC_API_KEY', 'CLAUDE_CONFIG_DIR'];

/** Creates a home directory under the system's temp directory. */
export async function makeTempHome(prefix: string): Promise<TempHome> {
  const path = await mkdtemp(join(tmpdir(), `acp-wire-${prefix}-`));
  return {
    path,
    env(extra = {}, drop = PEER_VARIABLES) {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const name of drop) delete env[name];
      return { ...env, HOME: path, ...extra };
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}

/**
 * Writes `$HOME/.codex/config.toml` sending codex's turns to a Responses API server at `baseUrl`
 * (codex ignores `OPENAI_BASE_URL`; the key comes from `OPENAI_API_KEY`).
 */
export async function writeCodexConfig(home: TempHome, baseUrl: string): Promise<void> {
  await mkdir(join(home.path, '.codex'));
  const config = [
    // A model codex has metadata for: with an unknown one it warns inside the turn's text.
    'model = "gpt-5.4-mini"',
    'model_provider = "fake"',
    '',
    '[model_providers.fake]',
    'name = "fake model on 127.0.0.1"',
    `base_url = "${baseUrl}"`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n');
  await writeFile(join(home.path, '.codex', 'config.toml'), config);
}

/**
 * The running processes whose environment has `HOME` set to `home`: everything a test started with
 * that home, however deep (Linux `/proc`; zombies do not count).
 */
export function processesWithHome(home: TempHome): number[] {
  const needle = `\0HOME=${home.path}\0`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) continue;
      if (`\0${readFileSync(`/proc/${entry}/environ`, 'utf8')}`.includes(needle)) found.push(Number(entry));
    } catch {
      // Ended while we looked, or not ours to read.
    }
  }
  return found;
}

/** Collects a stream's text; awaits a pattern in it; splits it into lines. */
export class StreamText {
  text = '';
  #isEnded = false;
  #waiters: { pattern: RegExp; resolve(): void; reject(error: Error): void }[] = [];

  constructor(
    stream: Readable,
    readonly label: string,
  ) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      this.#waiters = this.#waiters.filter((waiter) => {
        if (!waiter.pattern.test(this.text)) return true;
        waiter.resolve();
        return false;
      });
    });
    stream.once('close', () => {
      this.#isEnded = true;
      for (const waiter of this.#waiters) waiter.reject(this.#notFound(waiter.pattern));
      this.#waiters = [];
    });
  }

  /** The complete lines so far. */
  get lines(): string[] {
    return this.text.split('\n').slice(0, -1);
  }

  /** Resolves once the text matches `pattern`; rejects if the stream closes first. */
  waitFor(pattern: RegExp): Promise<void> {
    if (pattern.test(this.text)) return Promise.resolve();
    if (this.#isEnded) return Promise.reject(this.#notFound(pattern));
    return new Promise((resolve, reject) => this.#waiters.push({ pattern, resolve, reject }));
  }

  #notFound(pattern: RegExp): Error {
    return new Error(`${this.label} closed without ${String(pattern)}; its end: ${JSON.stringify(this.text.slice(-2000))}`);
  }
}
