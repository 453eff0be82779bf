/**
 * `@agentclientprotocol/codex-acp`, the real agent (a TypeScript agent on the ACP SDK that runs
 * `codex app-server` from `@openai/codex`), driven by acp-wire with no internet: its model is a
 * fake Responses API server on 127.0.0.1. See spec/helpers/current-agent-suite.ts.
 */
import { CURRENT_AGENTS } from '../helpers/current-agents';
import { describeCurrentAgent } from '../helpers/current-agent-suite';

describeCurrentAgent(CURRENT_AGENTS.codexAcp);
