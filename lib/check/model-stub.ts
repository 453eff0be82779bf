/**
 * `--model-stub`: a fake model server on 127.0.0.1 for an agent whose backend acp-wire knows, and
 * the throwaway `$HOME`, configuration and environment that point the agent at it, so that its
 * turns run with no network and no key.
 *
 * @packageDocumentation
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startFakeAnthropicServer } from './fake-models/anthropic-messages';
import { startFakeGeminiServer } from './fake-models/gemini';
import type { FakeModelBackend } from './fake-models/host';
import { FAKE_CHAT_MODEL, startFakeChatServer } from './fake-models/openai-chat';
import { startFakeModelServer } from './fake-models/openai-responses';

/** How one known agent is given a fake model: the API it speaks, how a command names it, and how to point it at the fake. */
interface StubRecipe {
  /** The API its model speaks. */
  readonly api: string;
  /** Whether a word of a command line names this agent (its package or its program). */
  readonly names: RegExp;
  start(): Promise<FakeModelBackend>;
  /** Writes its configuration into `home` and its variables into `env`. */
  prepare(home: string, baseUrl: string, env: NodeJS.ProcessEnv): Promise<void>;
}

/** A fake key: the fakes accept any. */
const FAKE_KEY = 'fake-key-for-a-local-server';

/** Writes `text` to `path` inside the home, making its directories. */
async function writeIn(home: string, path: string, text: string): Promise<void> {
  await mkdir(dirname(join(home, path)), { recursive: true });
  await writeFile(join(home, path), text);
}

const claude: Omit<StubRecipe, 'names'> = {
  api: 'Anthropic Messages API',
  start: () => startFakeAnthropicServer(),
  prepare: async (_home, baseUrl, env) => void Object.assign(env, claudeVariables(baseUrl)),
};

/** The agents `--model-stub` knows: how each is given its fake model. */
const RECIPES = {
  'codex-acp': {
    api: 'OpenAI Responses API',
    names: /codex-acp/,
    start: () => startFakeModelServer(),
    prepare: async (home, baseUrl, env) => {
      await writeIn(home, '.codex/config.toml', codexConfig(baseUrl));
      env.OPENAI_API_KEY = `sk-${FAKE_KEY}`;
    },
  },
  'claude-code-acp': { ...claude, names: /claude-code-acp/ },
  'claude-agent-acp': { ...claude, names: /claude-agent-acp/ },
  'gemini-cli': {
    api: 'Gemini API',
    names: /gemini-cli|(?:^|\/)gemini$/,
    start: () => startFakeGeminiServer(),
    prepare: async (home, baseUrl, env) => {
      await writeIn(home, '.gemini/settings.json', JSON.stringify(GEMINI_SETTINGS, null, 2));
      Object.assign(env, { GOOGLE_GEMINI_BASE_URL: baseUrl, GEMINI_API_KEY: FAKE_KEY, GEMINI_MODEL: 'gemini-2.5-flash' });
    },
  },
  opencode: {
    api: 'OpenAI Chat Completions API (an OpenAI-compatible provider)',
    names: /opencode/,
    start: () => startFakeChatServer(),
    prepare: async (home, baseUrl, env) => {
      await writeIn(home, '.config/opencode/opencode.json', JSON.stringify(opencodeConfig(baseUrl), null, 2));
      Object.assign(env, OPENCODE_VARIABLES);
    },
  },
} as const satisfies Record<string, StubRecipe>;

/** An agent `--model-stub` knows. */
export type StubbedAgent = keyof typeof RECIPES;

/** The agents `--model-stub` knows, and the API each one's model speaks. */
export const STUBBED_AGENTS: Readonly<Record<StubbedAgent, string>> = Object.fromEntries(
  Object.entries(RECIPES).map(([name, recipe]) => [name, recipe.api]),
) as Record<StubbedAgent, string>;

/**
 * Variables of the caller's environment that would change what a stubbed agent does (where its
 * model is, its key, its configuration): left out of its environment. `IS_SANDBOX` set to anything
 * but `1` makes the Claude agents pass `--dangerously-skip-permissions`, which the Claude Code CLI
 * refuses as root: every `session/new` would fail. The `XDG_*` directories would move opencode's
 * configuration and data out of the throwaway home.
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
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'GOOGLE_GEMINI_BASE_URL',
  'GOOGLE_VERTEX_BASE_URL',
  'GOOGLE_GENAI_USE_VERTEXAI',
  'GOOGLE_GENAI_USE_GCA',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_CLOUD_PROJECT',
  'GEMINI_MODEL',
  'OPENCODE_CONFIG',
  'OPENCODE_CONFIG_CONTENT',
  'OPENCODE_CONFIG_DIR',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'XDG_CACHE_HOME',
];

/** The variables that send the Claude agents' turns to a Messages API at `baseUrl`, with a fake key and no other traffic. */
export function claudeVariables(baseUrl: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: `sk-ant-${FAKE_KEY}`,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/**
 * The text of `$HOME/.codex/config.toml` sending codex's turns to a Responses API server at
 * `baseUrl` (codex ignores `OPENAI_BASE_URL`; the key comes from `OPENAI_API_KEY`), with its
 * plugins off: with them, codex 0.166 (under codex-acp 2.6) runs `git ls-remote
 * https://github.com/openai/plugins.git` and calls `chatgpt.com` when it starts.
 */
export function codexConfig(baseUrl: string): string {
  return [
    // A model codex 0.137 (codex-acp 0.16) has metadata for: with an unknown one it warns inside
    // the turn's text. Codex 0.166 has none for it and says so in a `notice` update instead; with
    // a model it knows, it offers MCP tools through its code mode, not in the request's `tools`.
    'model = "gpt-5.4-mini"',
    'model_provider = "fake"',
    '',
    '[model_providers.fake]',
    'name = "fake model on 127.0.0.1"',
    `base_url = "${baseUrl}"`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    '',
    '[features]',
    'plugins = false',
    '',
  ].join('\n');
}

/** gemini-cli's `$HOME/.gemini/settings.json`: no usage statistics, no update checks, no telemetry. */
const GEMINI_SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
  telemetry: { enabled: false },
};

/**
 * opencode's `$HOME/.config/opencode/opencode.json`: one OpenAI-compatible provider, `fake`, at
 * `baseUrl`, its model the default (and the small model, used for titles), nothing shared.
 */
export function opencodeConfig(baseUrl: string): object {
  const model = `fake/${FAKE_CHAT_MODEL}`;
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'fake model on 127.0.0.1',
        options: { baseURL: baseUrl, apiKey: FAKE_KEY },
        models: { [FAKE_CHAT_MODEL]: { name: 'fake model' } },
      },
    },
    model,
    small_model: model,
    autoupdate: false,
    share: 'disabled',
  };
}

/**
 * opencode's switches against traffic of its own (models list, updates, plugins, LSP servers).
 * At start it also installs `@opencode-ai/plugin` into its configuration directory with npm's
 * own code, asking registry.npmjs.org: npm's offline mode (`npm_config_offline`) makes that
 * install fail at once, and opencode runs on without it.
 */
const OPENCODE_VARIABLES: Record<string, string> = {
  npm_config_offline: 'true',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
};

/** Which known agent a command line starts (a word naming its package or program), if any. */
export function stubbedAgentOf(argv: readonly string[]): StubbedAgent | undefined {
  const names = Object.keys(RECIPES) as StubbedAgent[];
  for (const word of argv) {
    const found = names.find((name) => RECIPES[name].names.test(word));
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
  const recipe: StubRecipe = RECIPES[agent];
  const home = await mkdtemp(join(tmpdir(), `acp-wire-check-${agent}-`));
  const env: NodeJS.ProcessEnv = { ...base, HOME: home };
  for (const name of MODEL_VARIABLES) delete env[name];
  const server = await recipe.start();
  const close = async (): Promise<void> => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  };
  try {
    await recipe.prepare(home, server.baseUrl, env);
  } catch (error) {
    await close();
    throw error;
  }
  return { agent, server, home, env, close };
}
