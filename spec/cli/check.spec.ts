/**
 * `acp-wire check` as a user runs it (`node dist/bin/acp-wire.js check …`): the report on stdout
 * (text or `--json`), exit 0 only when no check fails, usage errors (exit 2, one line).
 */
import { expect } from 'chai';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckReport } from '../../lib/check/outcome';
import { CHECKS, PROXY_CHECKS } from '../../lib/check/battery';
import { CLI, CONFORMANCE_AGENT, PASSTHROUGH_PROXY, ROOT, fixtureArgs, useBuild } from '../helpers/processes';
import { descendants, isRunning, processesEnded } from '../helpers/process-table';
import { commandLine } from '../helpers/real-peers';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `acp-wire check …` to its end, bounded in time. */
function check(...args: string[]): Run {
  const result = spawnSync(process.execPath, [CLI, 'check', ...args], { cwd: ROOT, encoding: 'utf8', input: '', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `acp-wire check …` started, its output collected as it comes. */
function startCheck(...args: string[]): { child: ChildProcess; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, [CLI, 'check', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

const FAST = ['--timeout', '2000', '--cancel-timeout', '1000', '--exit-timeout', '1500'];
const ROOMY = ['--timeout', '5000', '--cancel-timeout', '2000', '--exit-timeout', '3000'];

describe('acp-wire check', function () {
  this.timeout(40_000);
  useBuild();

  it('--json against the conformance agent: every check passes, exit 0', () => {
    const run = check('--json', ...ROOMY, commandLine(process.execPath, CONFORMANCE_AGENT));
    expect(run.status, run.stderr).to.equal(0);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report).to.include({ isOk: true, command: commandLine(process.execPath, CONFORMANCE_AGENT) });
    expect(report.results.map((result) => [result.id, result.status])).to.deep.equal(CHECKS.map((each) => [each.id, 'pass']));
  });

  it('against an agent that answers $/ notifications: the failing line, its message and rule, the counts, exit 1', () => {
    const agent = [process.execPath, ...fixtureArgs('check/broken-agent', ['--break', 'json-rpc.dollar-notification'])];
    const run = check(...FAST, '--only', 'json-rpc', '--', ...agent);
    expect(run.status, run.stderr).to.equal(1);
    const lines = run.stdout.split('\n');
    const failing = lines.findIndex((line) => line.startsWith('  fail  MUST      json-rpc.dollar-notification  '));
    expect(failing, run.stdout).to.be.greaterThan(0);
    expect(lines[failing + 1]!.trim()).to.equal(
      'a notification was answered: {"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"$/acp-wire-check-unknown"}}',
    );
    expect(lines[failing + 2]!.trim()).to.equal(
      'rule (JSON-RPC 2.0, must): "The Server MUST NOT reply to a Notification, including those that are within a batch request." https://www.jsonrpc.org/specification#notification',
    );
    expect(lines).to.include('json-rpc').and.include('5 checks: 4 pass, 1 fail, 0 info, 0 n/a');
    expect(lines).to.include('failing the run (--fail-on must): json-rpc.dollar-notification');
    expect(lines.filter((line) => line.startsWith('  pass  '))).to.have.length(4);
  });

  it('--fail-on should: a failure of a SHOULD fails the run (exit 1); by default it does not (exit 0)', () => {
    const agent = [process.execPath, ...fixtureArgs('check/broken-agent', ['--break', 'framing.crlf'])];
    const byDefault = check(...FAST, '--only', 'framing.crlf', '--', ...agent);
    expect(byDefault.status, byDefault.stderr).to.equal(0);
    expect(byDefault.stdout)
      .to.match(/^ {2}fail {2}SHOULD {4}framing\.crlf /m)
      .and.include('\nno failure at or above --fail-on must\n');
    const strict = check(...FAST, '--fail-on', 'should', '--only', 'framing.crlf', '--', ...agent);
    expect(strict.status, strict.stderr).to.equal(1);
  });

  it('--write-baseline, then --baseline: the expected failure passes the run, and a stale entry fails it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'));
    try {
      const baseline = join(dir, 'baseline.txt');
      const broken = [process.execPath, ...fixtureArgs('check/broken-agent', ['--break', 'json-rpc.dollar-notification'])];
      const only = ['--only', 'json-rpc.dollar-notification', '--only', 'json-rpc.unknown-method'];
      expect(check(...FAST, ...only, '--write-baseline', baseline, '--', ...broken).status).to.equal(1);
      expect(readFileSync(baseline, 'utf8')).to.match(
        /^# acp-wire check baseline: .*\njson-rpc\.dollar-notification {2}# MUST: a notification was answered: \{"jsonrpc":"2\.0",.*\n$/,
      );
      const expected = check(...FAST, ...only, '--baseline', baseline, '--', ...broken);
      expect(expected.status, expected.stdout).to.equal(0);
      expect(expected.stdout).to.include('\nexpected by the baseline: json-rpc.dollar-notification\n');
      const fixed = check(...FAST, ...only, '--baseline', baseline, '--', process.execPath, CONFORMANCE_AGENT);
      expect(fixed.status, fixed.stdout).to.equal(1);
      expect(fixed.stdout).to.include('\nstale baseline entries (their checks pass now; remove them): json-rpc.dollar-notification\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on SIGINT, prints the results so far, ends every agent it started and exits 130 with one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'));
    const trace = join(dir, 'check.trace');
    // An agent that does not exit at the end of its stdin: the check waits for it (up to 20 s).
    const agent = [process.execPath, ...fixtureArgs('check/broken-agent', ['--break', 'lifecycle.stdin-end'])];
    const only = ['--only', 'framing.crlf', '--only', 'lifecycle.stdin-end'];
    const cli = startCheck(...only, '--exit-timeout', '20000', '--trace-file', trace, '--', ...agent);
    try {
      // The turn's answer is in the trace: the agent's stdin has ended, the check is waiting for its exit.
      while (!readTrace(trace).includes('"stopReason":"end_turn"')) await new Promise((resolve) => setTimeout(resolve, 20));
      const started = descendants(cli.child.pid!);
      expect(started).to.not.deep.equal([]);
      cli.child.kill('SIGINT');
      const [code] = (await once(cli.child, 'exit')) as [number | null];
      expect(code).to.equal(130);
      expect(cli.stderr()).to.equal('acp-wire check: stopped by SIGINT: every agent it started has been ended\n');
      expect(cli.stdout())
        .to.match(/^ {2}pass {2}SHOULD {4}framing\.crlf /m)
        .and.include('\nnot run: lifecycle.stdin-end\n');
      await processesEnded(started);
    } finally {
      cli.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on SIGTERM while the agent has not answered initialize, ends its whole process group and exits 143', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'));
    const pidFile = join(dir, 'pids');
    const agent = [process.execPath, ...fixtureArgs('check/unusable-agent', ['--mode', 'silent', '--pid-file', pidFile])];
    const cli = startCheck('--timeout', '60000', '--', ...agent);
    try {
      while (startedPids(pidFile).length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      cli.child.kill('SIGTERM');
      const [code] = (await once(cli.child, 'exit')) as [number | null];
      expect(code).to.equal(143);
      expect(startedPids(pidFile).filter(isRunning)).to.deep.equal([]);
    } finally {
      cli.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('an agent it cannot use: one line, exit 3, none of its processes left', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const cases: [string, string[], RegExp][] = [
      ['never answers', ['--mode', 'silent'], /^the agent did not answer initialize within 2000 ms \(--timeout\)$/],
      [
        'never answers, checked as a proxy',
        ['--mode', 'silent'],
        /^the agent did not answer proxy\/initialize within 2000 ms \(--timeout\)$/,
      ],
      [
        'answers proxy/initialize with an error, checked as a proxy',
        ['--mode', 'error'],
        /^the agent answered proxy\/initialize with an error: \{"jsonrpc":"2\.0","id":1,"error":\{"code":-32603,"message":"Internal error","data":"no API key set"\}\}$/,
      ],
      [
        'answers initialize with an error',
        ['--mode', 'error'],
        /^the agent answered initialize with an error: \{"jsonrpc":"2\.0","id":1,"error":\{"code":-32603,"message":"Internal error","data":"no API key set"\}\}$/,
      ],
      ['answers initialize after --timeout', ['--mode', 'late', '--delay', '3000'], /^the agent did not answer initialize within 2000 ms/],
      [
        'exits at once',
        ['--mode', 'exit'],
        /^the agent exited \(code 1\) before it answered initialize; stderr: Error: no configuration found in ~\/\.agent$/,
      ],
    ];
    for (const [what, mode, message] of cases) {
      it(`an agent that ${what}`, () => {
        const pidFile = join(dir, 'pids');
        const agent = [process.execPath, ...fixtureArgs('check/unusable-agent', [...mode, '--pid-file', pidFile])];
        const role = what.endsWith('as a proxy') ? ['--proxy'] : [];
        const run = check(...role, '--timeout', '2000', '--deadline', '20000', '--', ...agent);
        expect(run.status, run.stderr).to.equal(3);
        expect(run.stdout).to.equal('');
        const lines = run.stderr.trimEnd().split('\n');
        expect(lines).to.have.length(1);
        expect(lines[0]).to.match(/^acp-wire check: /);
        expect(lines[0]!.slice('acp-wire check: '.length)).to.match(message);
        expect(startedPids(pidFile).filter(isRunning)).to.deep.equal([]);
      });
    }
  });

  it('--json and --junit for an agent it cannot use: the error as JSON and as a JUnit error, exit 3', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'));
    try {
      const junit = join(dir, 'check.xml');
      const agent = [process.execPath, ...fixtureArgs('check/unusable-agent', ['--mode', 'exit'])];
      const run = check('--json', '--junit', junit, '--', ...agent);
      expect(run.status, run.stderr).to.equal(3);
      const json = JSON.parse(run.stdout) as { schemaVersion: number; isOk: boolean; error: { code: string; reason: string } };
      expect(json).to.include({ schemaVersion: 1, isOk: false });
      expect(json.error).to.include({ code: 'ACP_WIRE_CHECK_AGENT_UNUSABLE', reason: 'exited' });
      expect(readFileSync(junit, 'utf8')).to.include(
        '<error type="exited" message="the agent exited (code 1) before it answered initialize;',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--deadline: a run that cannot finish in time prints what ran and what did not, exit 4, none of its processes left', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'));
    try {
      const pidFile = join(dir, 'pids');
      // It answers initialize, then nothing: every check would wait --timeout (60 s) for an answer.
      const agent = [process.execPath, ...fixtureArgs('check/unusable-agent', ['--mode', 'stall', '--pid-file', pidFile])];
      const run = check('--timeout', '60000', '--deadline', '4000', '--only', 'framing', '--', ...agent);
      expect(run.status, run.stderr).to.equal(4);
      expect(run.stdout).to.include('not run: framing.crlf, framing.utf8, framing.malformed-line, framing.json-lines\n');
      expect(startedPids(pidFile).filter(isRunning)).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--proxy against the passthrough proxy: every proxy check passes, exit 0', () => {
    const run = check('--proxy', '--json', ...FAST, commandLine(process.execPath, PASSTHROUGH_PROXY));
    expect(run.status, run.stderr).to.equal(0);
    const report = JSON.parse(run.stdout) as { results: { id: string; status: string }[] };
    expect(report.results.map((result) => result.status)).to.deep.equal(PROXY_CHECKS.map(() => 'pass'));
  });

  it("--proxy --baseline takes the proxy checks' ids: an entry whose check passes is reported stale, exit 1", () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'));
    try {
      const baseline = join(dir, 'baseline.txt');
      writeFileSync(baseline, 'proxy.ids\n');
      const run = check(
        '--proxy',
        ...FAST,
        '--only',
        'proxy.ids',
        '--baseline',
        baseline,
        commandLine(process.execPath, PASSTHROUGH_PROXY),
      );
      expect(run.status, run.stderr).to.equal(1);
      expect(run.stdout).to.include('\nstale baseline entries (their checks pass now; remove them): proxy.ids\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--help prints the usage and exits 0', () => {
    const run = check('--help');
    expect(run).to.include({ status: 0, stderr: '' });
    expect(run.stdout.split('\n')[0]).to.equal('usage: acp-wire check [options] [--] "<agent command>"');
  });

  const usage: [string[], string][] = [
    [[], 'give the agent command, e.g. acp-wire check "node agent.js"'],
    [['--only', 'nope', 'agent'], '--only: no check or group named "nope"'],
    [['--timeout', '0', 'agent'], '--timeout needs a positive number of milliseconds, got "0"'],
    [['--env', 'NOVALUE', 'agent'], '--env needs NAME=VALUE, got "NOVALUE"'],
    [['--fail-on', 'may', 'agent'], '--fail-on needs one of must, should, practice, got "may"'],
    [['--baseline', '/nonexistent/baseline.txt', 'agent'], '--baseline: cannot read /nonexistent/baseline.txt (ENOENT)'],
    [['--proxy', '--only', 'framing', 'proxy'], '--only: no check or group named "framing"'],
    [['--url', 'ftp://127.0.0.1/acp'], '--url needs a ws://, wss://, http:// or https:// URL, got "ftp://127.0.0.1/acp"'],
    [['--url', 'http://127.0.0.1/acp', 'agent'], '--url checks a server: give no command with it'],
    [['--url', 'http://127.0.0.1/acp', '--max-clients', '0'], '--max-clients needs a whole number above 0, got "0"'],
    [['--proxy', '--model-stub', 'proxy'], '--model-stub does not apply to --proxy: the check plays its successor'],
    [['--json=1', 'agent'], '--json takes no value'],
  ];
  for (const [args, message] of usage) {
    it(`acp-wire check ${args.map((arg) => JSON.stringify(arg)).join(' ')}: exit 2, one line, nothing started`, () => {
      expect(check(...args)).to.deep.equal({ status: 2, stdout: '', stderr: `acp-wire check: ${message} (see acp-wire check --help)\n` });
    });
  }
});

/** The pids a fixture agent wrote to its pid file (none before it wrote them). */
function startedPids(path: string): number[] {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').map(Number);
  } catch {
    return [];
  }
}

/** The trace file's text so far ('' before it exists). */
function readTrace(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
