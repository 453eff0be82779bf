/**
 * `checkRemote()` (`acp-wire check --url`): `acp-wire serve` passes every remote check, over
 * WebSocket and over Streamable HTTP, and each check fails, with its message, against the fixture
 * server that breaks its rule (spec/fixtures/check/broken-server.ts `--break CHECK-ID`).
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REMOTE_CHECKS } from '../../lib/check/battery';
import type { CheckReport } from '../../lib/check/outcome';
import { AgentUnusableError } from '../../lib/check/preflight';
import { type RemoteCheckOptions, checkRemote } from '../../lib/check/remote-run';
import { CLI, CONFORMANCE_AGENT, type SpawnedProcess, spawnFixture, spawnScript, useBuild } from '../helpers/processes';

const TOKEN = 'sekrit';
/** The server's limit, as the served `acp-wire serve` and the fixture have it. */
const OPTIONS: RemoteCheckOptions = { token: TOKEN, maxClients: 3, timeoutMs: 5000, quietMs: 150 };

const BREAKS: readonly { id: string; message: RegExp }[] = [
  { id: 'remote.initialize', message: /^the initialize answer named no Acp-Connection-Id$/ },
  { id: 'remote.connection-id', message: /^a POST naming a connection the server does not hold was answered 202, not 404$/ },
  { id: 'remote.one-answer', message: /^the request with id 9007199254740993 was answered 2 times$/ },
  { id: 'remote.path-dialect', message: /^a second initialize for the same connection was answered 200, not 409$/ },
  { id: 'remote.auth', message: /^a client without a token was answered 200, not 401$/ },
  { id: 'remote.capacity', message: /^a client beyond the limit was refused 503 without Retry-After$/ },
  { id: 'remote.resume', message: /^the message after cursor \d+ \(cursor \d+\) was not replayed$/ },
  { id: 'remote.resume-refused', message: /^a resume after a cursor never given was answered 200, not 409$/ },
];

function statuses(report: CheckReport): [string, string][] {
  return report.results.map((result) => [result.id, result.status]);
}

/** The URL a server printed (`listening URL`). */
async function listening(spawned: SpawnedProcess, scheme: string): Promise<string> {
  const first = await spawned.stdout.take();
  const url = new RegExp(`^listening (${scheme}://127\\.0\\.0\\.1:\\d+/acp)$`).exec(first)?.[1];
  expect(url, first).to.be.a('string');
  return url!;
}

/** Resolves once `GET health` answers 200 (`ready`: the server has room for a client). */
async function untilReady(health: URL): Promise<void> {
  for (;;) {
    const response = await fetch(health);
    await response.arrayBuffer();
    if (response.status === 200) return;
    await delay(25);
  }
}

describe('checkRemote() (acp-wire check --url)', function () {
  this.timeout(60_000);
  useBuild();

  describe('against acp-wire serve (token, 3 clients, resumable)', () => {
    let serve: SpawnedProcess;
    let wsUrl: string;

    before(async () => {
      serve = spawnScript(CLI, ['serve', '--port', '0', '--resume', '--max-clients', '3', `${process.execPath} ${CONFORMANCE_AGENT}`], {
        env: { ACP_WIRE_TOKEN: TOKEN },
      });
      wsUrl = await listening(serve, 'ws');
    });

    after(async () => {
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).to.equal(0);
    });

    // Each check ends its clients, but serve frees a slot only once that client's agent process has
    // exited: the next run starts when serve's health says it has room again.
    beforeEach(() => untilReady(new URL('/healthz', wsUrl.replace(/^ws:/, 'http:'))));

    it('passes every remote check over WebSocket (the path dialect is HTTP only: n/a)', async () => {
      const report = await checkRemote(wsUrl, OPTIONS);
      const expected = REMOTE_CHECKS.map((check) => [check.id, check.id === 'remote.path-dialect' ? 'not-applicable' : 'pass']);
      expect(statuses(report), JSON.stringify(report.results.map((each) => each.message))).to.deep.equal(expected);
    });

    it('passes every remote check over Streamable HTTP, both dialects', async () => {
      const report = await checkRemote(wsUrl.replace(/^ws:/, 'http:'), OPTIONS);
      expect(statuses(report), JSON.stringify(report.results.map((each) => each.message))).to.deep.equal(
        REMOTE_CHECKS.map((check) => [check.id, 'pass']),
      );
    });

    it('without a token and a client limit, the checks of both are n/a', async () => {
      const report = await checkRemote(wsUrl, {
        ...OPTIONS,
        maxClients: undefined,
        only: ['remote.auth', 'remote.capacity'],
        token: TOKEN,
      });
      expect(statuses(report)).to.deep.equal([
        ['remote.auth', 'pass'],
        ['remote.capacity', 'not-applicable'],
      ]);
    });
  });

  it('rejects with AgentUnusableError when nothing listens at the URL', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const error = await checkRemote(`http://127.0.0.1:${port}/acp`, OPTIONS).then(
      () => expect.fail('resolved'),
      (reason: unknown) => reason,
    );
    expect(error).to.be.instanceOf(AgentUnusableError).and.include({ reason: 'not-started' });
  });

  it('refuses a URL that is not ws://, wss://, http:// or https://', async () => {
    await checkRemote('tcp://127.0.0.1:1/acp').then(
      () => expect.fail('resolved'),
      (error: unknown) =>
        expect(error).to.be.instanceOf(RangeError).with.property('message', 'url must be ws://, wss://, http:// or https://, got tcp:'),
    );
  });

  describe('against a server that breaks one rule (each check fails on its own fixture)', () => {
    it('has a break mode for every remote check', () => {
      expect(BREAKS.map((mode) => mode.id)).to.have.members(REMOTE_CHECKS.map((check) => check.id));
    });

    for (const mode of BREAKS) {
      it(`${mode.id} fails, with what broke it`, async () => {
        const fixture = spawnFixture('check/broken-server', ['--break', mode.id]);
        let report: CheckReport;
        try {
          report = await checkRemote(await listening(fixture, 'http'), { ...OPTIONS, only: [mode.id], failOn: 'practice' });
        } finally {
          await fixture.stop();
        }
        const result = report.results[0]!;
        expect(result).to.include({ id: mode.id, status: 'fail' });
        expect(result.message).to.match(mode.message);
        expect(report.failing).to.deep.equal([mode.id]);
      });
    }
  });
});
