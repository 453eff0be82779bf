/**
 * The benchmark measures what it claims: every library's client and server speak the bench
 * protocol correctly (so a fast number is never a broken run), the workloads report no failures,
 * and the summary's ratios point the right way.
 */
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { measureOne, parseCells } from '../../bench/independent';
import {
  COUNT as INDEPENDENT_COUNT,
  CPU as INDEPENDENT_CPU,
  ECHO as INDEPENDENT_ECHO,
  NOTE as INDEPENDENT_NOTE,
  connectClient,
  serve,
} from '../../bench/independent-peers';
import { LIBRARIES } from '../../bench/adapters';
import { openHarness, type Harness } from '../../bench/transports';
import { COUNT, ECHO, HOLD, NOTE, RELEASE, REQUEST_CANCELLED, SMALL_PARAMS, WAIT, objectPayload } from '../../bench/protocol';
import { median, summarize, trackerCosts } from '../../bench/summary';
import { NO_TRACKER, type SideBySide } from '../../bench/side-by-side';
import { runWorkload, WORKLOADS } from '../../bench/workloads';

describe('bench adapters', () => {
  for (const library of LIBRARIES) {
    describe(`${library.name} over in-process streams`, () => {
      let harness: Harness;
      beforeEach(async () => {
        harness = await openHarness(library, 'in-process');
      });
      afterEach(async () => {
        await harness.close();
      });

      it('echoes the params of a request as its result', async () => {
        expect(await harness.client.request(ECHO, SMALL_PARAMS)).to.deep.equal(SMALL_PARAMS);
      });

      it('counts every notification sent before a count request', async () => {
        for (let i = 0; i < 25; i++) harness.client.notify(NOTE, { n: i });
        expect(await harness.client.request(COUNT)).to.equal(25);
      });

      it('answers a request cancelled mid-flight with -32800', async () => {
        const call = harness.client.startCancellable(WAIT, SMALL_PARAMS);
        await harness.client.request(ECHO, SMALL_PARAMS);
        call.cancel();
        expect(await call.settled).to.equal(REQUEST_CANCELLED);
      });

      it('answers held requests only once released', async () => {
        const answers = [1, 2, 3].map(() => Promise.resolve(harness.client.request(HOLD, SMALL_PARAMS)));
        await harness.client.request(ECHO, SMALL_PARAMS);
        harness.client.notify(RELEASE);
        expect(await Promise.all(answers)).to.deep.equal([null, null, null]);
      });
    });
  }
});

describe('runWorkload()', () => {
  let harness: Harness;
  before(async () => {
    harness = await openHarness(LIBRARIES.find((l) => l.name === 'acp-wire')!, 'in-process');
  });
  after(async () => {
    await harness.close();
  });

  for (const workload of WORKLOADS) {
    it(`completes ${workload} with at least one operation and no failure`, async () => {
      const result = await runWorkload(harness.client, workload, 5);
      expect(result.ops).to.be.greaterThan(0);
      expect(result.failures).to.equal(0);
    });
  }
});

describe('objectPayload()', () => {
  it('builds an object whose JSON is at least the requested size and less than one entry more', () => {
    const length = JSON.stringify(objectPayload(64 * 1024)).length;
    expect(length).to.be.within(64 * 1024, 64 * 1024 + 200);
  });
});

describe('summarize()', () => {
  const run = (ops: number, seconds: number, latencyUs?: number) => ({ ops, seconds, latencyUs, failures: 0, cpuUs: ops * 2 });
  const sideBySide: SideBySide = {
    cells: [
      { transport: 'tcp', workload: 'sequential', variant: 'raw', runs: [run(100, 1), run(300, 1), run(200, 1)] },
      { transport: 'tcp', workload: 'sequential', variant: 'acp-wire', runs: [run(100, 1), run(100, 1), run(100, 1)] },
      { transport: 'tcp', workload: 'sequential', variant: NO_TRACKER, runs: [run(110, 1)] },
      { transport: 'tcp', workload: 'cancel', variant: 'raw', runs: [run(10, 1, 20)] },
      { transport: 'tcp', workload: 'cancel', variant: 'acp-wire', runs: [run(10, 1, 40)] },
    ],
    rss: [],
  };

  it('takes the median of the runs and gives throughput ratios as speed', () => {
    const row = summarize(sideBySide).find((r) => r.workload === 'sequential' && r.library === 'acp-wire')!;
    expect(row.median).to.equal(100);
    expect(row.vsRaw).to.equal(0.5);
    expect(row.cpuUsPerOp).to.equal(2);
  });

  it('gives latency ratios as speed too: twice the latency is 0.5×', () => {
    const row = summarize(sideBySide).find((r) => r.workload === 'cancel' && r.library === 'acp-wire')!;
    expect(row.unit).to.equal('µs');
    expect(row.vsRaw).to.equal(0.5);
  });

  it('reports the tracker overhead as how much slower the shipped build is', () => {
    const [cost] = trackerCosts(summarize(sideBySide));
    expect(cost!.overheadPct).to.be.closeTo(10, 1e-9);
  });

  it('gives the median of the per-round ratios, not the ratio of the medians', () => {
    const paired: SideBySide = {
      cells: [
        { transport: 'tcp', workload: 'sequential', variant: 'raw', runs: [run(100, 1), run(400, 1), run(400, 1)] },
        { transport: 'tcp', workload: 'sequential', variant: 'acp-wire', runs: [run(90, 1), run(360, 1), run(100, 1)] },
      ],
      rss: [],
    };
    // Per round 0.9, 0.9, 0.25: the median is 0.9 (the ratio of the medians would be 0.225).
    const row = summarize(paired).find((r) => r.library === 'acp-wire')!;
    expect(row.vsRaw).to.be.closeTo(0.9, 1e-9);
  });

  it("gives the CPU ratio as raw CPU per operation over the library's", () => {
    const cpuRun = (cpuUs: number) => ({ ops: 100, seconds: 1, latencyUs: undefined, failures: 0, cpuUs });
    const cpu: SideBySide = {
      cells: [
        { transport: 'in-process', workload: 'sequential', variant: 'raw', runs: [cpuRun(400)] },
        { transport: 'in-process', workload: 'sequential', variant: 'acp-wire', runs: [cpuRun(500)] },
      ],
      rss: [],
    };
    const row = summarize(cpu).find((r) => r.library === 'acp-wire')!;
    expect(row.cpuUsPerOp).to.equal(5);
    expect(row.cpuVsRaw).to.be.closeTo(0.8, 1e-9);
  });

  it('takes the lower middle value of an even number of runs', () => {
    expect(median([4, 1, 3, 2])).to.equal(2);
  });
});

describe("the outside benchmark's workload (bench/independent.ts)", () => {
  for (const impl of ['acp-wire', 'raw'] as const) {
    it(`${impl}: echoes, counts every notification and reports the server's CPU in process`, async () => {
      const toServer = new PassThrough();
      const toClient = new PassThrough();
      serve(impl, toServer, toClient);
      const client = connectClient(impl, toClient, toServer);
      const small = { position: { line: 1, character: 2 } };
      expect(await client.request(INDEPENDENT_ECHO, small)).to.deep.equal(small);
      for (let i = 0; i < 1000; i++) client.notify(INDEPENDENT_NOTE, small);
      expect(await client.request(INDEPENDENT_COUNT)).to.equal(1000);
      expect(await client.request(INDEPENDENT_CPU))
        .to.be.a('number')
        .greaterThan(0);
      toServer.destroy();
      toClient.destroy();
    });
  }

  it('measures one cell (a 1 MiB string echoed) as time and CPU per operation', async function () {
    this.timeout(30_000);
    const result = await measureOne('acp-wire', 'in-process', 'bigstr');
    expect(result.msPerOp).to.be.greaterThan(0);
    expect(result.cpuMicros).to.be.greaterThan(0);
  });

  it('names every cell, and refuses an unknown one', () => {
    expect(parseCells(undefined)).to.have.length(15);
    expect(parseCells('in-process/notify,tcp/seq')).to.deep.equal([
      ['in-process', 'notify'],
      ['tcp', 'seq'],
    ]);
    expect(() => parseCells('udp/seq')).to.throw(RangeError);
  });
});
