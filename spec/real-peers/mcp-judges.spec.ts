/**
 * MCP's own judges against the bridge's HTTP endpoint, with a provider written with
 * `@modelcontextprotocol/server` 2.4 (the reference server: tools, resources, prompts, logging,
 * completions, sampling and elicitation): the conformance suite 0.1.16 in server mode (every
 * scenario, through a forwarder that adds the bridge's secret) and the MCP Inspector 2.12.0's
 * command line. Both run on Node 22 from npm.
 */
import { expect } from 'chai';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsonObject } from '../../lib';
import { JUDGE_RUN_MS, MCP_JUDGES, type JudgedBridge, requireMcpJudges, runJudge, startJudgedBridge } from '../helpers/mcp-judges';
import { installedVersion, makeTempHome, type TempHome } from '../helpers/real-peers';

/** The scenarios that need a stream the server opens on its own, which the bridge does not serve. */
const EXCLUDED = ['resources-subscribe', 'resources-unsubscribe'];

/** Every server scenario of the suite 0.1.16 (`--suite all`), in its order. */
const SCENARIOS = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'elicitation-sep1330-enums',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  ...EXCLUDED,
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
];

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: JsonObject;
}

/** The checks of each scenario the suite saved under `dir` (one `server-<scenario>-<time>/checks.json` each). */
async function savedChecks(dir: string): Promise<Map<string, Check[]>> {
  const byScenario = new Map<string, Check[]>();
  for (const entry of (await readdir(dir)).sort()) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    byScenario.set(scenario, JSON.parse(await readFile(join(dir, entry, 'checks.json'), 'utf8')) as Check[]);
  }
  return byScenario;
}

function statuses(checks: readonly Check[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const check of checks) counts[check.status] = (counts[check.status] ?? 0) + 1;
  return counts;
}

describe("MCP's own judges against the bridge, with a provider written with the MCP server library", function () {
  this.timeout(JUDGE_RUN_MS * 2);

  let bridge: JudgedBridge;
  let home: TempHome;
  let work: string;

  before(() => {
    requireMcpJudges();
    expect(installedVersion('@modelcontextprotocol/conformance')).to.equal('0.1.16');
    expect(installedVersion('@modelcontextprotocol/inspector')).to.equal('2.12.0');
  });
  beforeEach(async () => {
    bridge = await startJudgedBridge();
    home = await makeTempHome('mcp-judges');
    work = await mkdtemp(join(tmpdir(), 'acp-wire-mcp-judges-'));
  });
  afterEach(async () => {
    await bridge.close();
    await home.remove();
    await rm(work, { recursive: true, force: true });
  });

  it('the conformance suite 0.1.16 passes every server scenario but the two that need a server-initiated stream', async () => {
    const baseline = join(work, 'expected-failures.yml');
    await writeFile(baseline, `server:\n${EXCLUDED.map((name) => `  - ${name}\n`).join('')}`);
    const results = join(work, 'results');
    const args = ['server', '--url', bridge.forwarder.url, '--suite', 'all', '--expected-failures', baseline, '-o', results];
    const run = await runJudge(MCP_JUDGES.conformance, args, { cwd: work, env: home.env() });
    expect(run.stdout).to.include('Total: 41 passed, 2 failed');
    // With the baseline, exit 0 says: the excluded scenarios failed, and nothing else did.
    expect(run.code, run.stdout.slice(-3000)).to.equal(0);
    const checks = await savedChecks(results);
    expect([...checks.keys()]).to.have.members(SCENARIOS);
    for (const [scenario, scenarioChecks] of checks) {
      const counts = statuses(scenarioChecks);
      if (EXCLUDED.includes(scenario)) {
        expect(scenarioChecks.map((check) => [check.status, check.errorMessage])).to.deep.equal([
          ['FAILURE', 'Failed: MCP error -32601: Method not found'],
        ]);
      } else {
        expect(counts, scenario).to.not.have.any.keys('FAILURE', 'WARNING');
      }
    }
    // server-sse-polling judges resuming a POST's event stream with GET and Last-Event-ID: the bridge
    // answers that POST with JSON, so the suite finds nothing to judge (INFO checks only).
    const polling = checks.get('server-sse-polling')!;
    expect(polling.find((check) => check.id === 'server-sse-content-type')?.details).to.deep.include({ contentType: 'application/json' });
    expect(Object.keys(statuses(polling))).to.deep.equal(['INFO']);
  });

  async function inspect(...args: string[]) {
    const cli = ['--cli', bridge.url, '--transport', 'http', '--header', `Authorization: ${bridge.authorization}`, ...args];
    return runJudge(MCP_JUDGES.inspector, cli, { cwd: work, env: home.env() });
  }

  it("the Inspector 2.12.0's command line lists the tools of a provider that declares logging", async () => {
    const run = await inspect('--method', 'tools/list');
    expect(run.code, run.stderr).to.equal(0);
    const { tools } = JSON.parse(run.stdout) as { tools: { name: string }[] };
    expect(tools.map((tool) => tool.name)).to.include.members(['test_simple_text', 'test_tool_with_logging', 'test_elicitation']);
  });

  it("the Inspector's command line calls a tool, with the level its logging/setLevel set stamped on the request", async () => {
    const run = await inspect('--method', 'tools/call', '--tool-name', 'test_tool_with_logging');
    expect(run.code, run.stderr).to.equal(0);
    expect((JSON.parse(run.stdout) as { content: unknown }).content).to.deep.equal([{ type: 'text', text: 'Tool with logging executed' }]);
    const call = bridge.chain.hop.fromRight.messages.find(
      (message) => message.method === 'mcp/message' && (message.params as { method: string }).method === 'tools/call',
    );
    const meta = (call!.params as { params: { _meta: JsonObject } }).params._meta;
    // The Inspector sends logging/setLevel "debug" right after connecting, when the server declares logging.
    expect(meta).to.have.property('io.modelcontextprotocol/logLevel', 'debug');
  });
});
