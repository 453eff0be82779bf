import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { ROOT } from './helpers/processes';

interface MochaJson {
  stats: { passes: number; failures: number };
  failures: { fullTitle: string; err: { message: string } }[];
}

/** Runs mocha with the project's .mocharc.json, in parallel workers, on spec/fixtures/open-handles/`files`. */
async function runMocha(files: readonly string[]): Promise<{ code: number | null; report: MochaJson }> {
  const mocha = join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
  const paths = files.map((file) => join('spec', 'fixtures', 'open-handles', file));
  const child = spawn(process.execPath, [mocha, '--parallel', '--jobs', '2', '--reporter', 'json', ...paths], { cwd: ROOT });
  const [stdout, code] = await Promise.all([text(child.stdout), new Promise<number | null>((done) => child.once('exit', done))]);
  return { code, report: JSON.parse(stdout) as MochaJson };
}

describe('npm test, in parallel workers', function () {
  this.timeout(60_000);

  it('fails the spec file that leaves a server listening, naming the file and the handle, and only that file', async () => {
    const { code, report } = await runMocha(['leaves-a-server-listening.ts', 'closes-its-server.ts']);
    expect(code).to.equal(1);
    expect(report.stats).to.include({ passes: 2, failures: 1 });
    expect(report.failures).to.have.lengthOf(1);
    expect(report.failures[0]!.err.message).to.match(/leaves-a-server-listening\.ts left 1 × TCPServerWrap keeping the event loop alive/);
  });
});
