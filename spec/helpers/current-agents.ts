/**
 * The agents people install now, as spec/helpers/current-agent-suite.ts drives them:
 * `@agentclientprotocol/codex-acp`, `@agentclientprotocol/claude-agent-acp` and `@qwen-code/qwen-code`
 * (`qwen --acp`), each against a fake model on 127.0.0.1 in a throwaway `$HOME` whose settings
 * turn off every request that would leave the machine. Why each setting is there is said on each
 * agent below (what was seen without it); docs/real-peers.md ("The current agents") sums them up.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeAnthropicServer } from '../../lib/check/fake-models/anthropic-messages';
import type { FakeModelBackend } from '../../lib/check/fake-models/host';
import { FAKE_CHAT_MODEL, startFakeChatServer } from '../../lib/check/fake-models/openai-chat';
import { startFakeModelServer } from '../../lib/check/fake-models/openai-responses';
import { codexConfig } from '../../lib/check/model-stub';
import { claudeEnv } from './claude-agent-suite';
import { REAL_PEERS, installedVersion, type TempHome } from './real-peers';

/** One current agent under test. */
export interface CurrentAgent {
  /** Its npm package (the spec's title names it with the installed version). */
  readonly packageName: string;
  /** A prefix for its throwaway `$HOME`. */
  readonly homePrefix: string;
  /** The program and arguments that run it as an ACP agent on stdio. */
  readonly argv: readonly string[];
  /** Starts its fake model. */
  startModel(): Promise<FakeModelBackend>;
  /** Prepares `home` for `model` and answers the agent's environment. */
  environment(home: TempHome, model: FakeModelBackend): Promise<NodeJS.ProcessEnv>;
  /** The path its turns are POSTed to on the fake model. */
  readonly modelPath: string;
  /** The ACP version it answers to an `initialize` offering 2. */
  readonly protocolVersion: 1 | 2;
  /**
   * The option it offers in `session/request_permission` to allow one MCP tool call, or undefined
   * when it is set up to call tools without asking.
   */
  readonly allowOnceOptionId: string | undefined;
}

/** The key every fake model is given: the agents want one, the fakes never check it. */
const FAKE_KEY = 'sk-fake-key-for-a-local-server';

async function writeHomeFile(home: TempHome, path: readonly string[], text: string): Promise<void> {
  const file = join(home.path, ...path);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, text);
}

/**
 * codex-acp 2.6: a TypeScript agent on the ACP SDK that runs `codex app-server` (from
 * `@openai/codex`, a native binary). The model provider and the plugins switched off come from
 * `config.toml` ({@link codexConfig}); the session starts in full access (`INITIAL_AGENT_MODE`):
 * in ACP v2, its approval of an MCP call fails inside the agent (a `session/request_permission`
 * without the `title` v2 requires), and the call is refused without asking the client.
 */
const CODEX_ACP: CurrentAgent = {
  packageName: '@agentclientprotocol/codex-acp',
  homePrefix: 'codex-acp-2',
  argv: [process.execPath, REAL_PEERS.codexAcpSdk],
  startModel: () => startFakeModelServer(),
  environment: async (home, model) => {
    await writeHomeFile(home, ['.codex', 'config.toml'], codexConfig(model.baseUrl));
    return home.env({ OPENAI_API_KEY: FAKE_KEY, INITIAL_AGENT_MODE: 'agent-full-access' });
  },
  modelPath: '/v1/responses',
  protocolVersion: 2,
  allowOnceOptionId: undefined,
};

/**
 * claude-agent-acp 0.101: the agent runs the Claude Agent SDK's native `claude` binary. Settings
 * put sessions in the `default` permission mode (the built-in `auto` mode asks the model itself
 * whether a tool call is safe), and `ENABLE_TOOL_SEARCH=false` offers MCP tools to the model
 * directly instead of behind its `ToolSearch` tool.
 */
const CLAUDE_AGENT_ACP: CurrentAgent = {
  packageName: '@agentclientprotocol/claude-agent-acp',
  homePrefix: 'claude-agent-acp-0101',
  argv: [REAL_PEERS.node22, REAL_PEERS.claudeAgentAcpSdk],
  startModel: () => startFakeAnthropicServer(),
  environment: async (home, model) => {
    await writeHomeFile(home, ['.claude', 'settings.json'], JSON.stringify({ permissions: { defaultMode: 'default' } }));
    return { ...claudeEnv(home, model.baseUrl), ENABLE_TOOL_SEARCH: 'false' };
  },
  modelPath: '/v1/messages',
  protocolVersion: 2,
  allowOnceOptionId: 'allow-once',
};

/**
 * Qwen Code 0.24 (`qwen --acp`): the model from `OPENAI_BASE_URL`, `OPENAI_API_KEY` and
 * `OPENAI_MODEL` (its `openai` auth type, Chat Completions). Its settings turn off usage
 * statistics (sent to an Alibaba Cloud endpoint), the memory extraction and follow-up suggestion
 * requests it makes to the model after a turn, the `systemd-inhibit` child it starts while a reply
 * streams, and tool search (MCP tools are otherwise only reachable through its `tool_search` and
 * `tool_call` tools); they put sessions in the `default` approval mode (the built-in `auto` mode
 * asks the model itself whether a tool call is safe). `QWEN_CODE_LEGACY_MCP_BLOCKING=1` makes
 * `session/new` answer once its MCP servers' tools are listed (else they join a later turn);
 * `TMPDIR` keeps its IPC socket folders in the throwaway home.
 */
const QWEN_CODE: CurrentAgent = {
  packageName: '@qwen-code/qwen-code',
  homePrefix: 'qwen-code',
  argv: [REAL_PEERS.node22, REAL_PEERS.qwen, '--acp'],
  startModel: () => startFakeChatServer(),
  environment: async (home, model) => {
    await writeHomeFile(home, ['.qwen', 'settings.json'], JSON.stringify(QWEN_SETTINGS));
    const modelVariables = { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: FAKE_KEY, OPENAI_MODEL: FAKE_CHAT_MODEL };
    return home.env({ ...modelVariables, QWEN_CODE_LEGACY_MCP_BLOCKING: '1', TMPDIR: home.path });
  },
  modelPath: '/v1/chat/completions',
  protocolVersion: 1,
  allowOnceOptionId: 'proceed_once',
};

/** `$HOME/.qwen/settings.json` for Qwen Code under test (see {@link QWEN_CODE}). */
export const QWEN_SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  memory: { enableManagedAutoMemory: false },
  general: { preventSystemSleep: false },
  ui: { enableFollowupSuggestions: false },
  tools: { approvalMode: 'default', toolSearch: { enabled: false } },
};

/** The three current agents, by name. */
export const CURRENT_AGENTS = { codexAcp: CODEX_ACP, claudeAgentAcp: CLAUDE_AGENT_ACP, qwenCode: QWEN_CODE } as const;

/** `package version`: the agent as the specs name it. */
export function agentTitle(agent: CurrentAgent): string {
  return `${agent.packageName} ${installedVersion(agent.packageName)}`;
}
