import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import type { LineReader } from '../helpers/lines';
import { childClosed, spawnFixture, useBuild } from '../helpers/processes';

const line = (id: number, method: string, params?: unknown): string =>
  `${JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params })}\n`;

describe('An agent on stdio whose stdin ends while handlers still run', function () {
  this.timeout(30_000);
  useBuild();
  let agent: ChildProcess;
  let stdout: LineReader;
  let stderr: LineReader;
  let exit: { code: number | null; signal: NodeJS.Signals | null };

  before(async () => {
    ({ child: agent, stdout, stderr } = spawnFixture('fault-peer', ['agent'], { nodeArgs: ['--expose-gc'] }));
    // All in one write, then the end of stdin: every handler starts before the connection closes.
    agent.stdin!.end(
      line(1, 'echo', [1]) +
        line(2, 'hold', { ms: 200 }) +
        line(3, 'wait') +
        line(4, 'dropAfterClose') +
        line(5, 'sleep', { ms: 100 }) +
        line(6, 'dispose'),
    );
    exit = await childClosed(agent);
  });

  it('exits 0 by itself once its handlers are done', () => {
    expect(exit).to.deep.equal({ code: 0, signal: null });
  });

  it('sends the answers given before stdin ended and nothing after', () => {
    expect(stdout.lines).to.deep.equal([
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: [1] }),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 6,
        error: { code: -32603, message: 'Internal error', data: 'request handler dropped its responder for `dispose`' },
      }),
    ]);
  });

  it('aborts the signals of running handlers; their late answers go nowhere', () => {
    expect(stderr.lines).to.include('abandoned 3');
  });

  it('sends no automatic answer for a responder dropped and collected after the close', () => {
    const closedAt = stderr.lines.indexOf('closed input ended');
    const collectedAt = stderr.lines.indexOf('collected 4');
    expect(closedAt).to.be.at.least(0);
    expect(collectedAt).to.be.greaterThan(closedAt);
    expect(stdout.lines.some((text) => text.includes('"id":4'))).to.equal(false);
  });
});
