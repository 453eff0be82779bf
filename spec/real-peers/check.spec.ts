/**
 * `acp-wire check --model-stub --baseline FILE --json` against the seven real agents, as an
 * agent's author runs it in CI: each run exits 0 with the agent's committed baseline
 * (spec/real-peers/baselines/: no new failure, no stale entry), the report names what the agent
 * breaks, with its own words, and what it does that its rule allows (info), and nothing it
 * started still runs.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBaseline } from '../../lib/check/baseline';
import { CHECKS } from '../../lib/check/battery';
import type { JsonCheckReport } from '../../lib/check/json-report';
import { CLI, ROOT, fixtureEnv, useBuild } from '../helpers/processes';
import { REAL_PEERS, REAL_PEERS_PACKAGE, installedVersion, processesWithVariable, requireRealPeers } from '../helpers/real-peers';

/** One real agent: its package, its command, the checks it fails and those reported as info, with what each message must say. */
interface Expected {
  readonly name: string;
  readonly argv: readonly string[];
  readonly failures: Readonly<Record<string, RegExp>>;
  readonly infos: Readonly<Record<string, RegExp>>;
}

/** Each is a JSON-RPC peer that does not exit when its stdin ends. */
const STILL_RUNNING = /^still running 12000 ms after its stdin ended$/;
/** The agents on the ACP TypeScript SDK before 2.4 log a malformed line on stderr and drop it. */
const MALFORMED_DROPPED = /^a malformed line got no answer \(a request sent after it did\); it still serves$/;
/** The agents in JavaScript parse ids as doubles. */
const ROUNDED_ID =
  /^the id 9007199254740993 came back as 9007199254740992: \{"jsonrpc":"2\.0","id":9007199254740992,"error":\{"code":-32601,/;
/** The Claude agents die of the EPIPE of writing to a client that has gone (an unhandled 'error' event). */
const EPIPE_CRASH = /^it ended with an error when its client went away mid-turn: exit code 1; stderr: Error: write EPIPE$/;
/** They ignore a `$/cancel_request` of a prompt (allowed: info): the turn runs on until `session/cancel`. */
const CANCEL_REQUEST_IGNORED = {
  'sessions.cancel-request': /^ignored: no answer to the prompt within 8000 ms; session\/cancel then ended it cancelled$/,
};

const AGENTS: readonly Expected[] = [
  {
    name: '@zed-industries/codex-acp',
    argv: [process.execPath, REAL_PEERS.codexAcp],
    failures: {
      'framing.malformed-line':
        /^the -32700 answer has no id \(JSON-RPC: "id": null\): \{"jsonrpc":"2\.0","error":\{"code":-32700,"message":"Parse error",.*; it still serves$/,
      'json-rpc.id-echo': /^the id -1 came back as \(none\): \{"jsonrpc":"2\.0","error":\{"code":-32700,"message":"Parse error"/,
      'json-rpc.unknown-notification':
        /^a notification was answered: \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"acp-wire\/check-unknown-notification"\}\}$/,
      'json-rpc.dollar-notification':
        /^a notification was answered: \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"\$\/acp-wire-check-unknown"\}\}$/,
      'sessions.cancel-request':
        /^the notification got the answer \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"\$\/cancel_request"\}\}; and ignored: no answer to the prompt within 8000 ms; session\/cancel then ended it cancelled$/,
      'lifecycle.stdin-end': STILL_RUNNING,
      // The launcher dies of SIGTERM; the native binary it started goes on running.
      'lifecycle.no-leftover':
        /^12000 ms after the agent exited \(after SIGTERM \(to the agent alone\)\), its group still runs \d+ \(codex-acp\)$/,
      // Its main returns the broken pipe as an error: exit 1, with a backtrace on stderr.
      'lifecycle.client-gone':
        /^it ended with an error when its client went away mid-turn: exit code 1; stderr: Error: ACP error: Internal error: \{ … "data": "Broken pipe \(os error 32\)"$/,
    },
    infos: {},
  },
  {
    name: '@zed-industries/claude-code-acp',
    argv: [process.execPath, REAL_PEERS.claudeCodeAcp],
    failures: {
      'framing.malformed-line': MALFORMED_DROPPED,
      'json-rpc.id-echo': ROUNDED_ID,
      'lifecycle.stdin-end': STILL_RUNNING,
      'lifecycle.client-gone': EPIPE_CRASH,
    },
    infos: CANCEL_REQUEST_IGNORED,
  },
  {
    name: '@zed-industries/claude-agent-acp',
    argv: [process.execPath, REAL_PEERS.claudeAgentAcp],
    failures: {
      'framing.malformed-line': MALFORMED_DROPPED,
      'json-rpc.id-echo': ROUNDED_ID,
      // One turn behind: the prompt after a cancelled one ends at once, with no text; the next streams both answers.
      'sessions.after-cancel':
        /^the first prompt after a cancelled turn \(asking for apricot\) ended end_turn after \d+ ms with no text; the second \(blueberry\) ended end_turn after \d+ ms with the text "echo: Reply with the single word apricot\..*\(one turn behind: the second's text holds the first's apricot\)$/,
      'lifecycle.stdin-end': STILL_RUNNING,
      'lifecycle.client-gone': EPIPE_CRASH,
    },
    infos: CANCEL_REQUEST_IGNORED,
  },
  {
    name: '@agentclientprotocol/codex-acp',
    argv: [process.execPath, REAL_PEERS.codexAcpSdk],
    failures: { 'json-rpc.id-echo': ROUNDED_ID },
    infos: {},
  },
  {
    name: '@agentclientprotocol/claude-agent-acp',
    argv: [REAL_PEERS.node22, REAL_PEERS.claudeAgentAcpSdk],
    failures: { 'json-rpc.id-echo': ROUNDED_ID, 'lifecycle.client-gone': EPIPE_CRASH },
    infos: {},
  },
  {
    name: '@google/gemini-cli',
    argv: [process.execPath, REAL_PEERS.geminiCli, '--acp'],
    failures: { 'framing.malformed-line': MALFORMED_DROPPED, 'json-rpc.id-echo': ROUNDED_ID },
    infos: CANCEL_REQUEST_IGNORED,
  },
  {
    name: 'opencode-ai',
    argv: [REAL_PEERS.opencode, 'acp'],
    failures: { 'framing.malformed-line': MALFORMED_DROPPED, 'json-rpc.id-echo': ROUNDED_ID },
    infos: CANCEL_REQUEST_IGNORED,
  },
];

/**
 * Bounds far from what they bound, so that a loaded machine cannot turn a verdict: an agent
 * answers `initialize` within ~8 s of starting, exits ~2 s after its stdin ends, and answers a
 * cancelled turn within a second (the defaults are 10 s, 3 s and 3 s).
 */
const BOUNDS = ['--timeout', '30000', '--exit-timeout', '12000', '--cancel-timeout', '8000'];

/** How long check may run (`--deadline`), and how long this spec waits for it before SIGTERM (it then ends its agents and exits 143). */
const DEADLINE_MS = 240_000;
const SIGTERM_AFTER_MS = DEADLINE_MS + 30_000;
/** How long after SIGTERM a check that has not exited is SIGKILLed. */
const SIGKILL_GRACE_MS = 20_000;
/** A variable set in check's environment: everything it started inherits it, so `/proc` shows what is left. */
const RUN_VARIABLE = 'ACP_WIRE_REAL_PEER_CHECK_RUN';

/** How `acp-wire check` ended and what it printed. */
interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `acp-wire check …` with `RUN_VARIABLE=run`, bounded: SIGTERM after {@link SIGTERM_AFTER_MS}, SIGKILL after the grace. */
async function runCheck(args: readonly string[], run: string): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, 'check', ...args], {
    cwd: ROOT,
    env: fixtureEnv({ [RUN_VARIABLE]: run }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const term = setTimeout(() => child.kill('SIGTERM'), SIGTERM_AFTER_MS);
  const kill = setTimeout(() => child.kill('SIGKILL'), SIGTERM_AFTER_MS + SIGKILL_GRACE_MS);
  try {
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    return { code, signal, stdout, stderr };
  } finally {
    clearTimeout(term);
    clearTimeout(kill);
  }
}

/** The committed baseline of an npm package: `baselines/<scope>-<name>.txt`. */
function baselineFile(name: string): string {
  return join(REAL_PEERS_PACKAGE, 'baselines', `${name.replace(/^@/, '').replace('/', '-')}.txt`);
}

/** `check id: status message` for each result, for an assertion's message. */
function summary(report: JsonCheckReport): string {
  return report.results.map((result) => `${result.status} ${result.id}: ${result.message ?? ''}`).join('\n');
}

for (const agent of AGENTS) {
  describe(`acp-wire check --model-stub --baseline: ${agent.name} ${installedVersion(agent.name)} (real agent)`, function () {
    this.timeout(20_000);
    useBuild();
    const baseline = baselineFile(agent.name);
    const run = randomUUID();
    let cli: CliRun;
    let report: JsonCheckReport;

    before(async function () {
      this.timeout(SIGTERM_AFTER_MS + SIGKILL_GRACE_MS + 10_000);
      requireRealPeers();
      const args = ['--model-stub', '--baseline', baseline, '--json', '--deadline', String(DEADLINE_MS), ...BOUNDS, '--', ...agent.argv];
      cli = await runCheck(args, run);
      try {
        report = JSON.parse(cli.stdout) as JsonCheckReport;
      } catch {
        throw new Error(`check printed no JSON report (exit ${cli.code}, signal ${cli.signal}): ${cli.stderr}`);
      }
    });

    it('exits 0 with its committed baseline: every MUST failure is listed there, and every entry still fails', () => {
      expect(cli, `${cli.stderr}\n${summary(report)}`).to.include({ code: 0, signal: null });
      expect(report).to.include({ isOk: true, isComplete: true, failOn: 'must' });
      expect(report.failing).to.deep.equal([]);
      expect(report.stale).to.deep.equal([]);
      const listed = parseBaseline(
        readFileSync(baseline, 'utf8'),
        CHECKS.map((check) => check.id),
      );
      const mustFailures = report.results
        .filter((result) => result.status === 'fail' && result.severity === 'must')
        .map((result) => result.id);
      expect(listed).to.have.members(mustFailures);
      expect(listed).to.have.members(report.expected);
    });

    it('runs every check, fails exactly these and reports these as info (no check is n/a: the fake model runs its turns)', () => {
      const notPassing = report.results.filter((result) => result.status !== 'pass').map((result) => `${result.status} ${result.id}`);
      const expected = report.results.flatMap((result) => {
        if (Object.hasOwn(agent.failures, result.id)) return [`fail ${result.id}`];
        return Object.hasOwn(agent.infos, result.id) ? [`info ${result.id}`] : [];
      });
      expect(notPassing).to.deep.equal(expected, summary(report));
      expect(report.results.map((result) => result.id)).to.deep.equal(CHECKS.map((check) => check.id));
    });

    for (const [id, message] of Object.entries(agent.failures)) {
      it(`${id} fails with what the agent did`, () => {
        const result = report.results.find((each) => each.id === id);
        expect(result?.status).to.equal('fail');
        expect(result?.message).to.match(message);
        expect(result?.evidence, 'the lines that show it').to.not.be.empty;
      });
    }

    for (const [id, message] of Object.entries(agent.infos)) {
      it(`${id} is info (allowed) with what the agent did`, () => {
        const result = report.results.find((each) => each.id === id);
        expect(result?.status).to.equal('info');
        expect(result?.message).to.match(message);
      });
    }

    it('passes session/cancel: the turn ends cancelled', () => {
      expect(report.results.find((each) => each.id === 'sessions.session-cancel')).to.include({ status: 'pass' });
    });

    it('leaves none of the processes it started running', () => {
      expect(processesWithVariable(RUN_VARIABLE, run)).to.deep.equal([]);
    });

    after(() => {
      // Only when a test failed; a process may exit meanwhile (ESRCH).
      for (const pid of processesWithVariable(RUN_VARIABLE, run)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    });
  });
}
