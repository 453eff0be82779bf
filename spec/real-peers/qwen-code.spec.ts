/**
 * `@qwen-code/qwen-code`'s `qwen --acp`, the real agent (on Node 22), driven by acp-wire with no
 * internet: its model is a fake Chat Completions API on 127.0.0.1. See
 * spec/helpers/current-agent-suite.ts.
 */
import { CURRENT_AGENTS } from '../helpers/current-agents';
import { describeCurrentAgent } from '../helpers/current-agent-suite';

describeCurrentAgent(CURRENT_AGENTS.qwenCode);
