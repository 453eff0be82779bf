/**
 * `--model-stub`: a fake model server on 127.0.0.1 for an agent whose backend acp-wire knows, and
 * the throwaway `$HOME` and environment that point the agent at it, so that its turns run with no
 * network and no key.
 *
 * @packageDocumentation
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeAnthropicServer } from './fake-anthropic-server';
import type { FakeModelBackend } from './fake-model-host';
import { startFakeModelServer } from './fake-model-server';

/** The agents `--model-stub` knows, and the API each one's model speaks. */
export const STUBBED_AGENTS = {
  'codex-acp': 'OpenAI Responses API',
  'claude-code-acp': 'Anthropic Messages API',
  'claude-agent-acp': 'Anthropic Messages API',
} as const;

/** An agent `--model-stub` knows. */
export type StubbedAgent = keyof typeof STUBBED_AGENTS;

/**
 * Variables of the caller's environment that would change what a stubbed agent does (where its
 * model is, its key, its configuration): left out of its environment. `IS_SANDBOX` set to anything
 * but `1` makes the Claude agents pass `--dangerously-skip-permissions`, which the Claude Code CLI
 * refuses as root: every `session/new` would fail.
 */
export const MODEL_VARIABLES: readonly string[] = [
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'CODEX_HOME',
  'CODEX_API_KEY',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CONFIG_DIR',
  'IS_SANDBOX',
];

/** The variables that send the Claude agents' turns to a Messages API at `baseUrl`, with a fake key and no other traffic. */
export function claudeVariables(baseUrl: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-a-local-server',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/**
 * The text of `$HOME/.codex/config.toml` sending codex's turns to a Responses API server at
 * `baseUrl` (codex ignores `OPENAI_BASE_URL`; the key comes from `OPENAI_API_KEY`).
 */
export function codexConfig(baseUrl: string): string {
  return [
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
}

/** Which known agent a command line starts (a word naming its package or program), if any. */
export function stubbedAgentOf(argv: readonly string[]): StubbedAgent | undefined {
  const names = Object.keys(STUBBED_AGENTS) as StubbedAgent[];
  for (const word of argv) {
    const found = names.find((name) => word.includes(name));
    if (found) return found;
  }
  return undefined;
}

/** A running model stub: the agent's environment and directory, and how to stop it all. */
export interface ModelStub {
  readonly agent: StubbedAgent;
  /** The fake model server. */
  readonly server: FakeModelBackend;
  /** The throwaway `$HOME` (also the agent's working directory and its sessions' `cwd`). */
  readonly home: string;
  /** The agent's environment: `base` without {@link MODEL_VARIABLES}, `HOME` and the model's variables set. */
  readonly env: NodeJS.ProcessEnv;
  /** Stops the server and removes the home directory. */
  close(): Promise<void>;
}

/**
 * Starts the fake model server of `agent` and prepares its home and environment.
 *
 * @param base - the environment to start from (default: this process's)
 */
export async function startModelStub(agent: StubbedAgent, base: NodeJS.ProcessEnv = process.env): Promise<ModelStub> {
  const home = await mkdtemp(join(tmpdir(), `acp-wire-check-${agent}-`));
  const env: NodeJS.ProcessEnv = { ...base, HOME: home };
  for (const name of MODEL_VARIABLES) delete env[name];
  const server = agent === 'codex-acp' ? await startFakeModelServer() : await startFakeAnthropicServer();
  if (agent === 'codex-acp') {
    await mkdir(join(home, '.codex'));
    await writeFile(join(home, '.codex', 'config.toml'), codexConfig(server.baseUrl));
    env.OPENAI_API_KEY = 'sk-fake-key-for-a-local-server';
  } else {
    Object.assign(env, claudeVariables(server.baseUrl));
  }
  const close = async (): Promise<void> => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  };
  return { agent, server, home, env, close };
}
