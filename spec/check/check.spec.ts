/**
 * `checkAgent()` (what `acp-wire check` runs): every check passes against the conformance agent,
 * and each check fails, with its message, against the fixture agent that breaks its rule
 * (spec/fixtures/check/broken-agent.ts `--break CHECK-ID`).
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECKS } from '../../lib/check/battery';
import type { CheckReport, CheckResult } from '../../lib/check/outcome';
import { AgentUnusableError } from '../../lib/check/preflight';
import { SEVERITIES } from '../../lib/check/rules';
import { type CheckOptions, checkAgent } from '../../lib/check/run';
import { CONFORMANCE_AGENT, ensureBuilt, fixtureArgs, useBuild } from '../helpers/processes';

/**
 * Short bounds: the fixtures answer at once, so only a broken rule waits this long. `timeoutMs`
 * also bounds a fixture's start (a Node process, up to its `initialize` answer): 2 s was missed
 * now and then by a fresh-clone CI run on a loaded 2-core machine.
 */
const FAST: CheckOptions = { timeoutMs: 5000, cancelTimeoutMs: 1000, exitTimeoutMs: 1500, quietMs: 150 };
/** Where every check passes, nothing waits for a bound: generous ones cost nothing and hold under load. */
const ROOMY: CheckOptions = { timeoutMs: 5000, cancelTimeoutMs: 2000, exitTimeoutMs: 3000, quietMs: 150 };

function brokenAgent(id: string): string[] {
  return [process.execPath, ...fixtureArgs('check/broken-agent', ['--break', id])];
}

function resultOf(report: CheckReport, id: string): CheckResult {
  const result = report.results.find((each) => each.id === id);
  if (!result) throw new Error(`no result for ${id} in ${JSON.stringify(report.results.map((each) => each.id))}`);
  return result;
}

/**
 * Each break mode, the checks run with it (the broken one, and those it needs: a final check reads
 * what others saw), and the message its failure must carry.
 */
const BREAKS: readonly { id: string; with?: readonly string[]; message: RegExp }[] = [
  { id: 'framing.crlf', message: /ended by CRLF was answered as a parse error: \{"jsonrpc":"2\.0","id":null,"error":\{"code":-32700/ },
  { id: 'framing.utf8', message: /^the id "ü-✓-😀" came back as "ü-✓-\uFFFD+"/u },
  { id: 'framing.malformed-line', message: /^a malformed line got no answer \(a request sent after it did\); it still serves$/ },
  {
    id: 'framing.json-lines',
    with: ['json-rpc.unknown-method'],
    message: /^1 of \d+ lines are not one JSON object; the first: broken-agent 1\.0 starting…$/,
  },
  { id: 'json-rpc.id-echo', message: /^the id 9007199254740993 came back as 9007199254740992: / },
  { id: 'json-rpc.unknown-method', message: /^acp-wire\/check-unknown-method was answered with -32603: / },
  { id: 'json-rpc.unknown-notification', message: /^a notification was answered: \{"jsonrpc":"2\.0","id":null,"error":\{"code":-32601/ },
  {
    id: 'json-rpc.dollar-notification',
    message:
      /^a notification was answered: \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"\$\/acp-wire-check-unknown"\}\}$/,
  },
  {
    id: 'json-rpc.one-answer',
    with: ['json-rpc.unknown-method'],
    message: /^acp-wire\/check-unknown-method \(id \d+\) was answered 2 times; the second: /,
  },
  {
    id: 'initialize.offer-1',
    message: /^the offer of 1 was answered with 3, neither 1 nor its latest version \(2, its answer to an offer of 99\)$/,
  },
  { id: 'initialize.offer-2', message: /^the offer of 2 was answered with protocolVersion "2\.0", not a version/ },
  { id: 'initialize.offer-99', with: ['initialize.offer-2'], message: /^the offer of 99 was answered with 99: a version no agent speaks$/ },
  {
    id: 'initialize.capabilities',
    with: ['initialize.offer-2'],
    message: /^1 schema error\(s\): v2 InitializeResponse\/capabilities must be object/,
  },
  { id: 'initialize.second', message: new RegExp(`^no answer to initialize within ${FAST.timeoutMs} ms$`) },
  { id: 'sessions.new', message: /^session\/new was not answered with a sessionId: \{"jsonrpc":"2\.0","id":\d+,"result":\{\}\}$/ },
  { id: 'sessions.turn', message: /PromptResponse\/stopReason must be equal to constant/ },
  { id: 'sessions.session-cancel', message: /^the prompt was not answered within 1000 ms of session\/cancel$/ },
  {
    id: 'sessions.after-cancel',
    with: ['sessions.session-cancel'],
    message:
      /^the first prompt after a cancelled turn \(asking for apricot\) ended end_turn after \d+ ms with no text; the second \(blueberry\) ended end_turn after \d+ ms with the text "echo: Reply with the single word apricot\. \[echo\]" \(one turn behind: the second's text holds the first's apricot\)$/,
  },
  {
    id: 'sessions.cancel-request',
    message:
      /^the notification got the answer \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"\$\/cancel_request"\}\}; and ignored: no answer to the prompt within 1000 ms; session\/cancel then ended it cancelled$/,
  },
  {
    id: 'sessions.updates-valid',
    with: ['sessions.turn'],
    message: /SessionNotification\/update\/content\/text must be string .* in \{"jsonrpc":"2\.0","method":"session\/update"/,
  },
  { id: 'lifecycle.stdin-end', message: /^still running 1500 ms after its stdin ended$/ },
  {
    id: 'lifecycle.no-leftover',
    with: ['lifecycle.stdin-end'],
    message: /^1500 ms after the agent exited \(after its stdin ended\), its group still runs \d+ \(node\)$/,
  },
  {
    id: 'lifecycle.client-gone',
    message: /^it ended with an error when its client went away mid-turn: exit code 1; stderr: Error: write EPIPE$/,
  },
];

describe('checkAgent() (acp-wire check)', function () {
  this.timeout(60_000);
  useBuild();

  describe('against the conformance agent', () => {
    let report: CheckReport;
    let traceDir: string;

    before(async () => {
      traceDir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'));
      report = await checkAgent([process.execPath, CONFORMANCE_AGENT], { ...ROOMY, traceFile: join(traceDir, 'check.trace') });
    });

    after(() => rmSync(traceDir, { recursive: true, force: true }));

    it('runs every check of the battery, grouped, and every one passes', () => {
      expect(report.results.map((result) => result.id)).to.deep.equal(CHECKS.map((check) => check.id));
      expect(report.results.filter((result) => result.status !== 'pass')).to.deep.equal([]);
      expect(report)
        .to.include({ isOk: true })
        .and.have.deep.property('counts', { pass: CHECKS.length, fail: 0, info: 0, notApplicable: 0 });
    });

    it('says which version each offer got, and how $/cancel_request ended the prompt', () => {
      expect(resultOf(report, 'initialize.offer-1').message).to.equal('answered 1');
      expect(resultOf(report, 'initialize.offer-99').message).to.equal('answered 2');
      expect(resultOf(report, 'sessions.cancel-request').message).to.equal('honoured: the prompt ended error -32800 "Request cancelled"');
    });

    it('writes every line of the run to the trace file, tagged with its check and its process', () => {
      const lines = readFileSync(join(traceDir, 'check.trace'), 'utf8').trimEnd().split('\n');
      const traced = lines.filter((line) => !line.startsWith('#') && line !== '');
      const initializes = traced.filter((line) => / {2}> {2}\{"jsonrpc":"2\.0","id":\d+,"method":"initialize",/.test(line));
      expect(initializes.length).to.be.greaterThan(5);
      for (const id of ['preflight', 'framing.crlf', 'json-rpc.id-echo', 'initialize.offer-99', 'sessions.turn', 'lifecycle.client-gone']) {
        expect(
          traced.some((line) => line.split(/ +/)[2] === id),
          id,
        ).to.equal(true);
      }
      expect(
        traced.some((line) => /^ +[\d.]+ {2}sessions\.turn +agent-\d+ +< {2}\{"jsonrpc":"2\.0","method":"session\/update"/.test(line)),
      ).to.equal(true);
    });
  });

  it('with turns: false, the turn checks are n/a and the others pass', async () => {
    const report = await checkAgent([process.execPath, CONFORMANCE_AGENT], {
      ...FAST,
      turns: false,
      only: ['sessions', 'lifecycle.client-gone'],
    });
    expect(report.results.map((result) => [result.id, result.status])).to.deep.equal([
      ['sessions.new', 'not-applicable'],
      ['sessions.turn', 'not-applicable'],
      ['sessions.session-cancel', 'not-applicable'],
      ['sessions.after-cancel', 'not-applicable'],
      ['sessions.cancel-request', 'not-applicable'],
      ['sessions.updates-valid', 'not-applicable'],
      ['lifecycle.client-gone', 'not-applicable'],
    ]);
    expect(report.isOk).to.equal(true);
  });

  it('every check has a severity and a rule: its words quoted, and a link', () => {
    for (const check of CHECKS) {
      expect(SEVERITIES, check.id).to.include(check.rule.severity);
      expect(check.rule.quote.length, check.id).to.be.greaterThan(20);
      expect(check.rule.url, check.id).to.match(/^https:\/\//);
    }
  });

  it('reports a $/cancel_request the agent ignores as info, not a failure: the receiver may ignore it', async () => {
    const report = await checkAgent(brokenAgent('ignore-cancel-request'), {
      ...FAST,
      only: ['sessions.cancel-request'],
      failOn: 'practice',
    });
    expect(resultOf(report, 'sessions.cancel-request')).to.include({
      status: 'info',
      message: 'ignored: no answer to the prompt within 1000 ms; session/cancel then ended it cancelled',
    });
    expect(report).to.include({ isOk: true }).and.have.deep.property('counts', { pass: 0, fail: 0, info: 1, notApplicable: 0 });
  });

  it('cancels once the turn is under way (its first output), not on a session notice that came first', async () => {
    const report = await checkAgent(brokenAgent('commands-before-turn'), {
      ...FAST,
      only: ['sessions.cancel-request', 'sessions.session-cancel'],
    });
    expect(resultOf(report, 'sessions.cancel-request')).to.include({
      status: 'pass',
      message: 'honoured: the prompt ended error -32800 "Request cancelled"',
    });
    expect(resultOf(report, 'sessions.session-cancel')).to.include({ status: 'pass' });
  });

  it('gives a process it starts the longest start-up seen on top of --timeout: an agent whose starts get slower still passes', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-starts-'));
    try {
      // Its first start (the preflight) serves after 3 s, each later one after 6 s: timeoutMs, and more with Node's start.
      const argv = [...brokenAgent('slower-starts'), '--starts', join(dir, 'starts')];
      const report = await checkAgent(argv, { ...FAST, timeoutMs: 6000, only: ['initialize.offer-1'] });
      expect(resultOf(report, 'initialize.offer-1')).to.include({ status: 'pass' });
      expect(readFileSync(join(dir, 'starts'), 'utf8')).to.equal('..');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('framing.malformed-line names the rule each finding breaks: a -32700 without an id breaks a MUST', async () => {
    const report = await checkAgent(brokenAgent('parse-error-without-id'), { ...FAST, only: ['framing.malformed-line'] });
    const result = resultOf(report, 'framing.malformed-line');
    expect(result).to.include({ status: 'fail', severity: 'must' });
    expect(result.rule.quote).to.include('it MUST be Null');
    expect(report.failing).to.deep.equal(['framing.malformed-line']);
  });

  it('lifecycle.client-gone fails an agent that runs on after its client went away', async () => {
    const report = await checkAgent(brokenAgent('lifecycle.stdin-end'), { ...FAST, only: ['lifecycle.client-gone'] });
    expect(resultOf(report, 'lifecycle.client-gone')).to.include({
      status: 'fail',
      message: 'still running 1500 ms after its client went away mid-turn',
    });
  });

  it('failOn: a failure below it is reported and does not fail the run', async () => {
    const only = ['framing.crlf'];
    const byDefault = await checkAgent(brokenAgent('framing.crlf'), { ...FAST, only });
    expect(resultOf(byDefault, 'framing.crlf')).to.include({ status: 'fail', severity: 'should' });
    expect(byDefault).to.include({ isOk: true, failOn: 'must' }).and.have.deep.property('failing', []);
    const strict = await checkAgent(brokenAgent('framing.crlf'), { ...FAST, only, failOn: 'should' });
    expect(strict).to.include({ isOk: false }).and.have.deep.property('failing', ['framing.crlf']);
  });

  it('rejects with AgentUnusableError, running no check, when the command cannot start', async () => {
    const results: CheckResult[] = [];
    const error = await checkAgent(['/nonexistent/acp-agent'], { ...FAST, onResult: (result) => results.push(result) }).then(
      () => expect.fail('resolved'),
      (reason: unknown) => reason,
    );
    expect(error).to.be.instanceOf(AgentUnusableError).and.include({ code: 'ACP_WIRE_CHECK_AGENT_UNUSABLE', reason: 'not-started' });
    expect((error as Error).message).to.equal('the agent could not be started: spawn /nonexistent/acp-agent ENOENT');
    expect(results).to.deep.equal([]);
  });

  it('refuses an unknown check name and invalid bounds', async () => {
    await checkAgent(['true'], { only: ['framing.nope'] }).then(
      () => expect.fail('resolved'),
      (error: unknown) => expect(error).to.be.instanceOf(RangeError).with.property('message', 'no check or group named "framing.nope"'),
    );
    await checkAgent(['true'], { timeoutMs: 0 }).then(
      () => expect.fail('resolved'),
      (error: unknown) =>
        expect(error).to.be.instanceOf(RangeError).with.property('message', 'timeoutMs must be a positive number of milliseconds'),
    );
  });

  describe('against an agent that breaks one rule (each check fails on its own fixture)', () => {
    before(() => ensureBuilt());
    it('has a break mode for every check', () => {
      expect(BREAKS.map((mode) => mode.id)).to.have.members(CHECKS.map((check) => check.id));
    });

    for (const mode of BREAKS) {
      it(`${mode.id} fails, with what broke it`, async () => {
        const only = [mode.id, ...(mode.with ?? [])];
        const report = await checkAgent(brokenAgent(mode.id), { ...FAST, only, failOn: 'practice' });
        const result = resultOf(report, mode.id);
        expect(result.status, result.message).to.equal('fail');
        expect(result.message).to.match(mode.message);
        expect(report).to.include({ isOk: false }).and.have.deep.property('failing', [mode.id]);
      });
    }
  });
});
