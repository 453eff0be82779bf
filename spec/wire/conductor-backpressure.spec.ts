/**
 * Backpressure through the real conductor process: an agent that does not read its stdin
 * makes `acp-wire conduct` stop reading its client once it holds its backlog limit; the client's
 * writes back up on the client's side of the pipe, and the conductor's memory stays bounded. Once
 * the agent reads, everything arrives. Bounds on bytes, never on time.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { spawnConductor } from '../helpers/chain';
import { isResponseTo, lineMatching } from '../helpers/messages';
import { fixtureArgs, useBuild, type SpawnedProcess } from '../helpers/processes';

/** The command line of the fixture agent that reads nothing until SIGUSR2 (after the build). */
const deafAgent = (): string => ['node', ...fixtureArgs('deaf-agent')].join(' ');
const BACKLOG_LIMIT = 16 * 1024 * 1024;
const LINE_BYTES = 64 * 1024;
const COUNT = 1024;
const MIB = 1024 * 1024;

/** Resident memory of a process in bytes, from /proc (Linux). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

describe('acp-wire conduct with an agent that does not read its stdin', function () {
  this.timeout(60000);
  before(function () {
    if (!existsSync('/proc/self/status')) this.skip();
  });
  useBuild();

  let chain: SpawnedProcess | undefined;
  afterEach(async () => {
    await chain?.stop(); // at once when it already exited
    chain = undefined;
  });

  it('stops reading the client past its backlog limit, with bounded memory, and delivers everything once the agent reads', async () => {
    chain = spawnConductor([deafAgent()], { ACP_WIRE_LOG: 'debug' });
    const agentPid = Number((await chain.stderr.take(lineMatching(/^deaf-agent \d+$/))).split(' ')[1]);
    const baseline = rssOf(chain.child.pid!);
    const input = chain.child.stdin!;
    const pad = 'x'.repeat(LINE_BYTES - 64);
    // Bounded by the test's timeout only: how long the conductor takes to read 16 MiB is not the claim.
    const paused = chain.stderr.take(lineMatching(/ client debug input paused: holding /), Number.POSITIVE_INFINITY);
    for (let seq = 0; seq < COUNT; seq++) input.write(`{"jsonrpc":"2.0","method":"n","params":{"seq":${seq},"pad":"${pad}"}}\n`);
    const readAll = once(input, 'drain').then(() => undefined);
    const pauseLine = await Promise.race([paused, readAll]);
    expect(pauseLine, 'the conductor read the whole flood').to.be.a('string');
    const held = Number(/holding (\d+) bytes/.exec(pauseLine!)![1]);
    expect(held).to.be.within(BACKLOG_LIMIT, BACKLOG_LIMIT + LINE_BYTES);
    // What the client wrote and the conductor has not read backs up on the client's side.
    const total = COUNT * LINE_BYTES;
    expect(input.writableLength).to.be.at.least(total - held - 8 * LINE_BYTES);
    const grown = rssOf(chain.child.pid!) - baseline;
    expect(grown, `conductor RSS grew ${(grown / MIB).toFixed(1)} MiB`).to.be.below(100 * MIB);
    process.kill(agentPid, 'SIGUSR2');
    if (input.writableLength > 0) await once(input, 'drain');
    expect(await chain.request(1, 'count')).to.equal(`{"jsonrpc":"2.0","id":1,"result":{"notifications":${COUNT},"lastSeq":${COUNT - 1}}}`);
    expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
    expect(chain.stdout.matching(isResponseTo(1))).to.have.length(1);
  });
});
