/**
 * claude-code-acp, the real agent, driven by acp-wire with no internet: its Claude Code CLI talks
 * to a fake Anthropic Messages API on 127.0.0.1.
 */
import { describeClaudeAgent } from '../helpers/claude-agent-suite';
import { REAL_PEERS, installedVersion } from '../helpers/real-peers';

describeClaudeAgent({
  title: `claude-code-acp ${installedVersion('@zed-industries/claude-code-acp')} (real agent) with a fake Anthropic API on 127.0.0.1`,
  entry: REAL_PEERS.claudeCodeAcp,
  homePrefix: 'claude-code',
});
