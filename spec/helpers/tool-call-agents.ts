/**
 * The three real agents of spec/real-peers/tool-calls.spec.ts (codex-acp, claude-code-acp,
 * claude-agent-acp) as that spec drives them: how each starts against its fake model, and what each
 * was measured to do with the MCP servers of a session (docs/real-peers.md, "Tool calls").
 */
import { readFileSync } from 'node:fs';
import type { AcpClient, AcpV1 } from '../../lib';
import { startFakeAnthropicServer } from '../../lib/check/fake-models/anthropic-messages';
import { startFakeModelServer, type RecordedRequest } from '../../lib/check/fake-models/openai-responses';
import type { Recording } from '../../lib/check/fake-models/recording';
import type { TestMcpServer } from '../fixtures/test-mcp-server';
import type { ScriptedToolCall, ToolCallScript } from '../../lib/check/fake-models/tool-call-script';
import { claudeEnv } from './claude-agent-suite';
import { liveProcesses } from './process-table';
import { REAL_PEERS, installedVersion, writeCodexConfig, type TempHome } from './real-peers';

/** What both fake models offer the spec. */
export interface FakeModel {
  readonly baseUrl: string;
  readonly requests: readonly RecordedRequest[];
  callTool(script: ToolCallScript): ScriptedToolCall;
  readonly toolErrors: Recording<string>;
  close(): Promise<void>;
}

/** One agent under test, and what it was measured to do. */
export interface ToolCallAgent {
  readonly title: string;
  readonly homePrefix: string;
  /** Starts its fake model. */
  startModel(): Promise<FakeModel>;
  /** Prepares `home` for `model` and answers the agent's environment. */
  environment(home: TempHome, model: FakeModel): Promise<NodeJS.ProcessEnv>;
  /** The entry script, run with this Node. */
  readonly entry: string;
  /** The auth method to `authenticate` with before `session/new`, if one is needed. */
  readonly authMethod?: string;
  /** `agentCapabilities.mcpCapabilities` in its `initialize` answer. */
  readonly mcpCapabilities: Record<string, boolean>;
  /** Its MCP client's `initialize`: `protocolVersion` and `clientInfo.name`. */
  readonly mcpInitialize: { readonly protocolVersion: string; readonly clientName: string };
  /** The option it offers in `session/request_permission` to allow one call. */
  readonly allowOnceOptionId: string;
  /** Whether a `session/cancel` while its MCP tool runs makes it send `notifications/cancelled`. */
  readonly sendsCancelledNotification: boolean;
}

/** The three agents. */
export const TOOL_CALL_AGENTS: readonly ToolCallAgent[] = [
  {
    title: `codex-acp ${installedVersion('@zed-industries/codex-acp')}`,
    homePrefix: 'codex-tools',
    startModel: () => startFakeModelServer(),
    environment: async (home, model) => {
      await writeCodexConfig(home, model.baseUrl);
      return home.env({ OPENAI_API_KEY: 'sk-fake-key-for-a-local-server' });
    },
    entry: REAL_PEERS.codexAcp,
    authMethod: 'openai-api-key',
    mcpCapabilities: { http: true, sse: false, acp: false },
    mcpInitialize: { protocolVersion: '2025-06-18', clientName: 'codex-mcp-client' },
    allowOnceOptionId: 'approved',
    sendsCancelledNotification: false,
  },
  ...[
    { name: 'claude-code-acp', entry: REAL_PEERS.claudeCodeAcp },
    { name: 'claude-agent-acp', entry: REAL_PEERS.claudeAgentAcp },
  ].map(
    ({ name, entry }): ToolCallAgent => ({
      title: `${name} ${installedVersion(`@zed-industries/${name}`)}`,
      homePrefix: `${name}-tools`,
      startModel: () => startFakeAnthropicServer(),
      environment: async (home, model) => claudeEnv(home, model.baseUrl),
      entry,
      mcpCapabilities: { http: true, sse: true },
      mcpInitialize: { protocolVersion: '2025-11-25', clientName: 'claude-code' },
      allowOnceOptionId: 'allow',
      sendsCancelledNotification: true,
    }),
  ),
];

/** The two declarations of the test MCP server for `session/new`: Streamable HTTP and stdio. */
export function mcpDeclarations(mcp: TestMcpServer): { readonly http: AcpV1.McpServer; readonly stdio: AcpV1.McpServer } {
  return {
    http: { type: 'http', name: 'probehttp', url: mcp.url, headers: [{ name: mcp.secretHeader.name, value: mcp.secretHeader.value }] },
    stdio: { name: 'probestdio', command: mcp.stdioCommand.command, args: [...mcp.stdioCommand.args], env: [] },
  };
}

/** The permission requests an `AcpClient` answered, each with the option it picked. */
export interface PermissionLog {
  readonly requests: { readonly params: { readonly toolCall: unknown; readonly options: readonly unknown[] }; readonly picked: string }[];
}

/** Answers every `session/request_permission` of `client` with `optionId`, and logs them. */
export function allowTools(client: AcpClient, optionId: string): PermissionLog {
  const log: PermissionLog = { requests: [] };
  client.handle({
    requestPermission: (params) => {
      log.requests.push({ params: params as PermissionLog['requests'][number]['params'], picked: optionId });
      return { outcome: { outcome: 'selected', optionId } };
    },
  });
  return log;
}

/**
 * The tool names a model request offers: flat names (Messages and Responses APIs; Chat Completions
 * names them in `function.name`), and `namespace__name` inside a namespace.
 */
export function offeredToolNames(request: RecordedRequest | undefined): string[] {
  const tools = (request?.body as { tools?: unknown } | undefined)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool: { name?: unknown; tools?: unknown; function?: { name?: unknown } }) => {
    const name = tool?.name ?? tool?.function?.name;
    if (typeof name !== 'string') return [];
    if (!Array.isArray(tool.tools)) return [name];
    return tool.tools.map((inner: { name?: unknown }) => `${name}__${String(inner?.name)}`);
  });
}

/** The running processes whose command line holds every one of `words` (Linux `/proc`). */
export function processesRunning(...words: string[]): number[] {
  return liveProcesses().flatMap(({ pid }) => {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return words.every((word) => command.includes(word)) ? [pid] : [];
    } catch {
      return []; // ended while we looked
    }
  });
}
