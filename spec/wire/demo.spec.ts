/**
 * The runnable examples end by themselves, exit 0 and print what they promise.
 * Needs dist/: useBuild() builds it when it is missing or stale.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { PACKAGE_VERSION } from '../helpers/conformance-agent';
import { ROOT, type SpawnedProcess, spawnScript, useBuild } from '../helpers/processes';

/** Runs a compiled example to its end; resolves with its stdout lines, stderr and exit. */
async function runExample(name: string): Promise<{ lines: string[]; stderr: string; code: number | null }> {
  const example: SpawnedProcess = spawnScript(join(ROOT, 'dist', 'examples', `${name}.js`));
  example.child.stdin!.end();
  const [lines, exit] = await Promise.all([example.stdout.ended(), example.exited]);
  return { lines, stderr: example.stderr.text, code: exit.code };
}

describe('examples', () => {
  useBuild();

  describe('demo (npm run demo)', () => {
    let run: { lines: string[]; stderr: string; code: number | null };

    before(async () => {
      run = await runExample('demo');
    });

    it('exits 0 on its own with nothing on stderr', () => {
      expect({ code: run.code, stderr: run.stderr }).to.deep.equal({ code: 0, stderr: '' });
    });

    it('says which chain it uses', () => {
      expect(run.lines[1]).to.be.oneOf([
        'chain: client → acp-wire conduct → passthrough-proxy → conformance-agent (each hop over stdio)',
        'chain: client → conformance-agent over stdio (the conductor is not built)',
      ]);
    });

    it('prints the negotiated version, and the same client code with an ACP v1 agent', () => {
      expect(run.lines).to.include.members([
        '   negotiated ACP v2 (acp-wire conduct --trace logs the version of every hop)',
        '   ← protocol 1: negotiated ACP v1',
        '     ↳ agent_message_chunk "v1"',
        '   ← {stopReason: end_turn}  (v1 answers the prompt at the end of the turn)',
      ]);
    });

    it('shows initialize, a streamed turn, a cancelled request, an automatic answer and session/cancel', () => {
      const shown = run.lines.map((line) => line.replace(/[0-9a-f]{8}…/g, '<id>').replace(/after \d+\.\d s/, 'after <t> s'));
      expect(shown).to.include.members([
        `   ← acp-wire-conformance-agent ${PACKAGE_VERSION}, protocol 2`,
        '   ← {messageId: <id>}  (answered as soon as the prompt is inserted)',
        '     ↳ user_message <id>',
        '     ↳ agent_message_chunk "acp-wire"',
        '     ↳ state idle (end_turn)',
        '   ← error -32800 Request cancelled',
        '   ← error -32603 Internal error: request handler dropped its responder for `_test/drop`',
        "     (sent by the library once the agent's garbage collector noticed, after <t> s)",
        '   → session/cancel',
        '     ↳ state idle (cancelled)',
        'chain closed (exit code 0)',
      ]);
    });

    it("shows a tool call through the chain: the proxy's word_count answers the agent's MCP call", () => {
      expect(run.lines).to.include.members([
        '   chain: client → acp-wire conduct → tool-proxy (word_count) → tool-agent',
        '     ↳ agent_message_chunk "word_count (from word-tools) says: 5"',
      ]);
      const tool = run.lines.slice(run.lines.indexOf('   chain: client → acp-wire conduct → tool-proxy (word_count) → tool-agent'));
      expect(tool).to.include('   the turn ended: end_turn');
    });

    it('prints readable lines, never a raw JSON-RPC message', () => {
      expect(run.lines.filter((line) => line.includes('"jsonrpc"'))).to.deep.equal([]);
    });
  });

  describe('quickstart-client', () => {
    it('runs the same client against a v1-only agent and a v2 agent: a turn to end_turn, a cancelled turn', async () => {
      const { lines, stderr, code } = await runExample('quickstart-client');
      expect({ code, stderr }).to.deep.equal({ code: 0, stderr: '' });
      const agent = (version: number): string[] => [
        `quickstart-agent: ACP v${version}`,
        '  You said: hello (end_turn)',
        '  a long story: cancelled',
        '  agent exited: { code: 0, signal: null }',
      ];
      expect(lines).to.deep.equal([...agent(1), ...agent(2)]);
    });
  });

  describe('session-cancel', () => {
    it('shows a request cancel losing after insertion and session/cancel stopping the turn', async () => {
      const { lines, stderr, code } = await runExample('session-cancel');
      expect({ code, stderr }).to.deep.equal({ code: 0, stderr: '' });
      expect(lines.map((line) => line.replace(/[0-9a-f]{8}…/, '<id>'))).to.deep.equal([
        'cancel before insertion  → error -32800 Request cancelled',
        'cancel after insertion   → success {messageId: <id>} (the turn is still running)',
        'session/cancel           → state idle, stopReason cancelled',
      ]);
    });
  });
});
