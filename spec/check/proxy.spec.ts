/**
 * `checkProxy()` (`acp-wire check --proxy`): acp-wire's passthrough and tool proxies pass every
 * proxy check, and each check fails, with its message, against the fixture proxy that breaks its
 * rule (spec/fixtures/check/broken-proxy.ts `--break CHECK-ID`).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { PROXY_CHECKS } from '../../lib/check/battery';
import type { CheckReport } from '../../lib/check/outcome';
import { type CheckOptions, checkProxy } from '../../lib/check/run';
import { PASSTHROUGH_PROXY, ROOT, fixtureArgs, useBuild } from '../helpers/processes';

const FAST: CheckOptions = { timeoutMs: 5000, cancelTimeoutMs: 1000, exitTimeoutMs: 1500, quietMs: 150 };
const TOOL_PROXY = join(ROOT, 'dist', 'examples', 'tool-proxy.js');

const BREAKS: readonly { id: string; message: RegExp }[] = [
  { id: 'proxy.initialize', message: /^proxy\/initialize was answered without an initialize sent to the successor$/ },
  {
    id: 'proxy.envelope',
    message: /^a client request was not sent to the successor in proxy\/successor: it came out plain, not in proxy\/successor$/,
  },
  {
    id: 'proxy.ids',
    message: /^the client's id "acp-wire-check-a" was sent on to the successor as it was, not as an id of the proxy's own$/,
  },
  {
    id: 'proxy.cancel-request',
    message:
      /^the client's \$\/cancel_request was tunnelled in proxy\/successor with the client's id "acp-wire-check-cancel", not re-issued with the id of the forwarded request \(\d+\)$/,
  },
  {
    id: 'proxy.mcp-message',
    message:
      /^an mcp\/message for a server the proxy does not provide was not forwarded toward the client; it answered it itself: \{"jsonrpc":"2\.0","id":\d+,"result":\{"result":\{"tools":\[\]\}\}\}$/,
  },
  { id: 'proxy.clean-exit', message: /^still running 1500 ms after its stdin ended$/ },
];

function statuses(report: CheckReport): [string, string][] {
  return report.results.map((result) => [result.id, result.status]);
}

describe('checkProxy() (acp-wire check --proxy)', function () {
  this.timeout(60_000);
  useBuild();

  it("acp-wire's passthrough proxy passes every proxy check", async () => {
    const report = await checkProxy([process.execPath, PASSTHROUGH_PROXY], FAST);
    expect(statuses(report)).to.deep.equal(PROXY_CHECKS.map((check) => [check.id, 'pass']));
    expect(report.isOk).to.equal(true);
  });

  it("acp-wire's tool proxy passes every proxy check, answering mcp/message for its own server", async () => {
    const report = await checkProxy([process.execPath, TOOL_PROXY], FAST);
    expect(statuses(report)).to.deep.equal(PROXY_CHECKS.map((check) => [check.id, 'pass']));
    expect(report.results.find((result) => result.id === 'proxy.mcp-message')?.message).to.match(
      /^forwarded another server's; answered its own word-tools:/,
    );
  });

  it('refuses modelStub: the check plays the successor', async () => {
    const error = await checkProxy(['true'], { modelStub: true }).then(
      () => expect.fail('resolved'),
      (reason: unknown) => reason,
    );
    expect(error)
      .to.be.instanceOf(RangeError)
      .with.property('message', 'modelStub does not apply to a proxy: the check plays its successor');
  });

  describe('against a proxy that breaks one rule (each check fails on its own fixture)', () => {
    it('has a break mode for every proxy check', () => {
      expect(BREAKS.map((mode) => mode.id)).to.have.members(PROXY_CHECKS.map((check) => check.id));
    });

    for (const mode of BREAKS) {
      it(`${mode.id} fails, with what broke it`, async () => {
        const proxy = [process.execPath, ...fixtureArgs('check/broken-proxy', ['--break', mode.id])];
        const report = await checkProxy(proxy, { ...FAST, only: [mode.id], failOn: 'practice' });
        const result = report.results[0]!;
        expect(result).to.include({ id: mode.id, status: 'fail' });
        expect(result.message).to.match(mode.message);
        expect(report.failing).to.deep.equal([mode.id]);
      });
    }

    it('without a break, the fixture proxy passes every proxy check (the breaks are all it breaks)', async () => {
      const report = await checkProxy([process.execPath, ...fixtureArgs('check/broken-proxy')], FAST);
      expect(statuses(report)).to.deep.equal(PROXY_CHECKS.map((check) => [check.id, 'pass']));
    });
  });
});
