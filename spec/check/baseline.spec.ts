/**
 * Baselines: `parseBaseline()` reads a baseline file, and `checkAgent({ baseline })` fails a run on a
 * failure the baseline does not list and on an entry whose check now passes (stale).
 */
import { expect } from 'chai';
import { parseBaseline } from '../../lib/check/baseline';
import { CHECKS } from '../../lib/check/battery';
import { type CheckOptions, checkAgent } from '../../lib/check/run';
import { fixtureArgs, useBuild } from '../helpers/processes';

const FAST: CheckOptions = { timeoutMs: 5000, cancelTimeoutMs: 1000, exitTimeoutMs: 1500, quietMs: 150 };
const IDS = CHECKS.map((check) => check.id);

describe('parseBaseline()', () => {
  it('reads one check id per line, skipping blank lines and # comments, each id once', () => {
    const text = '# expected today\n\njson-rpc.id-echo  # MUST: rounded\r\nframing.crlf\njson-rpc.id-echo\n';
    expect(parseBaseline(text, IDS)).to.deep.equal(['json-rpc.id-echo', 'framing.crlf']);
  });

  it('throws RangeError naming the line of an id no check has, or of a line with two words', () => {
    expect(() => parseBaseline('framing.crlf\nframing.nope\n', IDS)).to.throw(RangeError, 'baseline line 2: no check named "framing.nope"');
    expect(() => parseBaseline('framing.crlf framing.utf8\n', IDS)).to.throw(RangeError, 'baseline line 1: one check id per line');
  });
});

describe('checkAgent() with a baseline', function () {
  this.timeout(60_000);
  useBuild();

  const agent = (): string[] => [process.execPath, ...fixtureArgs('check/broken-agent', ['--break', 'json-rpc.dollar-notification'])];
  const only = ['json-rpc.dollar-notification', 'json-rpc.unknown-method'];

  it('a failure the baseline lists does not fail the run', async () => {
    const report = await checkAgent(agent(), { ...FAST, only, baseline: ['json-rpc.dollar-notification'] });
    expect(report).to.include({ isOk: true });
    expect(report).to.deep.include({ failing: [], expected: ['json-rpc.dollar-notification'], stale: [] });
  });

  it('a failure the baseline does not list fails the run', async () => {
    const report = await checkAgent(agent(), { ...FAST, only, baseline: [] });
    expect(report)
      .to.include({ isOk: false })
      .and.deep.include({ failing: ['json-rpc.dollar-notification'], expected: [] });
  });

  it('an entry whose check now passes is stale and fails the run', async () => {
    const baseline = ['json-rpc.dollar-notification', 'json-rpc.unknown-method'];
    const report = await checkAgent(agent(), { ...FAST, only, baseline });
    expect(report)
      .to.include({ isOk: false })
      .and.deep.include({ failing: [], stale: ['json-rpc.unknown-method'] });
  });

  it('refuses an id no check has', async () => {
    await checkAgent(['true'], { baseline: ['json-rpc.nope'] }).then(
      () => expect.fail('resolved'),
      (error: unknown) => expect(error).to.be.instanceOf(RangeError).with.property('message', 'baseline: no check named "json-rpc.nope"'),
    );
  });
});
