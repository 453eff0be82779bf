/**
 * claude-agent-acp, the real agent (claude-code-acp's maintained successor), driven by acp-wire
 * with no internet: its Claude Code CLI talks to a fake Anthropic Messages API on 127.0.0.1.
 */
import { describeClaudeAgent } from '../helpers/claude-agent-suite';
import { REAL_PEERS, installedVersion } from '../helpers/real-peers';

describeClaudeAgent({
  title: `claude-agent-acp ${installedVersion('@zed-industries/claude-agent-acp')} (real agent) with a fake Anthropic API on 127.0.0.1`,
  entry: REAL_PEERS.claudeAgentAcp,
  homePrefix: 'claude-agent',
});
