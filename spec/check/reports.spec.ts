/**
 * The reports of `checkAgent()` for CI: the JSON document (versioned, with each result's rule and
 * its evidence exactly as it crossed), the evidence trace (`traceFile`: every line, raw, tagged
 * with its check and process) and JUnit XML.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toJsonReport } from '../../lib/check/json-report';
import { toJunitXml } from '../../lib/check/junit';
import type { CheckReport } from '../../lib/check/outcome';
import { type CheckOptions, checkAgent } from '../../lib/check/run';
import { ROOT, fixtureArgs, useBuild } from '../helpers/processes';

const FAST: CheckOptions = { timeoutMs: 5000, cancelTimeoutMs: 1000, exitTimeoutMs: 1500, quietMs: 150 };

function brokenAgent(mode: string): string[] {
  return [process.execPath, ...fixtureArgs('check/broken-agent', ['--break', mode])];
}

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)]);
}

/** The lines of an evidence trace, without its header. */
function traceLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
}

describe('check reports', function () {
  this.timeout(60_000);
  useBuild();
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'acp-wire-check-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('an agent that rounds ids and drops a malformed line', () => {
    let report: CheckReport;
    let trace: string;

    beforeEach(async () => {
      trace = join(dir, 'check.trace');
      report = await checkAgent(brokenAgent('json-rpc.id-echo'), {
        ...FAST,
        only: ['json-rpc.id-echo', 'framing.malformed-line'],
        traceFile: trace,
      });
    });

    it('JSON: schemaVersion, the tool and its version, counts without an "n/a" key', () => {
      const json = toJsonReport(report);
      const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
      expect(json)
        .to.include({ schemaVersion: 1, isOk: false })
        .and.deep.include({ tool: { name: 'acp-wire', version } });
      expect(json.counts).to.deep.equal({ pass: 1, fail: 1, info: 0, notApplicable: 0 });
      expect(keysOf(JSON.parse(JSON.stringify(json)))).to.not.include('n/a');
    });

    it('JSON: a failure carries its rule and its evidence, the request and the answer exactly as they crossed', () => {
      const result = toJsonReport(report).results.find((each) => each.id === 'json-rpc.id-echo')!;
      expect(result).to.include({ status: 'fail', severity: 'must' });
      expect(result.rule).to.include({ source: 'ACP schema' });
      expect(result.evidence.map(({ direction, process, check, text }) => ({ direction, process, check, text }))).to.deep.equal([
        {
          direction: 'out',
          process: 'agent-2',
          check: 'json-rpc.id-echo',
          text: '{"jsonrpc":"2.0","id":9007199254740993,"method":"acp-wire/check-unknown-method"}',
        },
        {
          direction: 'in',
          process: 'agent-2',
          check: 'json-rpc.id-echo',
          text: '{"jsonrpc":"2.0","id":9007199254740992,"error":{"code":-32601,"message":"Method not found","data":"acp-wire/check-unknown-method"}}',
        },
      ]);
    });

    it('the trace holds every line raw, tagged with its check and process: ids as sent, the malformed line', () => {
      const lines = traceLines(trace);
      const id2e53 =
        /^ +[\d.]+ {2}json-rpc\.id-echo +agent-2 +> {2}\{"jsonrpc":"2\.0","id":9007199254740993,"method":"acp-wire\/check-unknown-method"\}$/;
      expect(lines.some((line) => id2e53.test(line))).to.equal(true);
      expect(
        lines.some((line) => /^ +[\d.]+ {2}json-rpc\.id-echo +agent-2 +< {2}\{"jsonrpc":"2\.0","id":9007199254740992,"error"/.test(line)),
      ).to.equal(true);
      expect(
        lines.some((line) => /^ +[\d.]+ {2}framing\.malformed-line +agent-1 +> {2}\{"jsonrpc":"2\.0","id":7,"method":$/.test(line)),
      ).to.equal(true);
      expect(lines.some((line) => /^ +[\d.]+ {2}preflight +agent-1 +\* {2}started: pid \d+$/.test(line))).to.equal(true);
    });

    it('JUnit: a test case per check, the failure with its severity, message, rule and evidence', () => {
      const xml = toJunitXml(report);
      expect(xml).to.match(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="acp-wire check: /);
      expect(xml).to.include('<testsuite name="json-rpc" tests="1" failures="1" errors="0" skipped="0"');
      expect(xml).to.include('<testcase classname="acp-wire check.framing" name="framing.malformed-line"');
      expect(xml).to.match(/<failure type="MUST" message="the id 9007199254740993 came back as 9007199254740992: \{&quot;jsonrpc&quot;/);
      expect(xml).to.include('rule (ACP schema, must): &quot;RequestId:');
      expect(xml).to.include('&gt;  {&quot;jsonrpc&quot;:&quot;2.0&quot;,&quot;id&quot;:9007199254740993,');
    });
  });

  it('the trace keeps an answer without an id as it was, and a banner on stdout', async () => {
    const trace = join(dir, 'check.trace');
    await checkAgent(brokenAgent('json-rpc.dollar-notification'), { ...FAST, only: ['json-rpc.dollar-notification'], traceFile: trace });
    const answer = '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"$/acp-wire-check-unknown"}}';
    const idless = (line: string): boolean =>
      /^ +[\d.]+ {2}json-rpc\.dollar-notification +agent-1 +< {2}/.test(line) && line.endsWith(`  ${answer}`);
    expect(traceLines(trace).some(idless)).to.equal(true);
    await checkAgent(brokenAgent('framing.json-lines'), {
      ...FAST,
      only: ['framing.json-lines', 'json-rpc.unknown-method'],
      traceFile: trace,
    });
    expect(traceLines(trace).some((line) => / {2}< {2}broken-agent 1\.0 starting…$/.test(line))).to.equal(true);
  });

  it('JUnit: a failure below failOn and one the baseline expects are notes of a passing case, n/a is skipped', async () => {
    const report = await checkAgent(brokenAgent('json-rpc.dollar-notification'), {
      ...FAST,
      turns: false,
      only: ['json-rpc.dollar-notification', 'sessions.new'],
      baseline: ['json-rpc.dollar-notification'],
    });
    const xml = toJunitXml(report);
    expect(xml).to.not.include('<failure');
    expect(xml).to.match(
      /<testcase classname="acp-wire check\.json-rpc" name="json-rpc\.dollar-notification" time="[\d.]+">\n {6}<system-out>fails, expected by the baseline \(MUST\): a notification was answered/,
    );
    expect(xml).to.include('<skipped message="turns are not run (--no-turns)"/>');
  });
});
