/**
 * docs/wire.md over a real child process's stdin/stdout: exact NDJSON lines in and out of
 * spec/fixtures/echo-peer.ts, and the process-level contract (exit, stderr, trace logging).
 */
import { expect } from 'chai';
import { ConnectionClosedError, spawnConnection } from '../../lib';
import { fixtureArgs, fixtureEnv, type SpawnedProcess, spawnFixture, stopAll, useBuild } from '../helpers/processes';
import { itAnswersAsWireMdSays, itAnswersConcurrentRequests } from '../helpers/wire';

describe('wire over child-process stdio (echo-peer)', () => {
  useBuild();
  after(stopAll);

  describe('answers', () => {
    let peer: SpawnedProcess;
    before(() => {
      peer = spawnFixture('echo-peer');
    });
    after(async () => {
      expect(await peer.stop()).to.deep.equal({ code: 0, signal: null });
    });

    itAnswersAsWireMdSays(() => ({ send: peer.send, lines: peer.stdout }));

    it('answers the string id "1" and the number id 1 separately while both are in flight', async () => {
      const start = peer.stdout.lines.length;
      peer.send(
        '{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":20}}',
        '{"jsonrpc":"2.0","id":"1","method":"sleep","params":{"ms":10}}',
      );
      const lines = (await peer.stdout.waitForLines(start + 2)).slice(start);
      expect(lines.sort()).to.deep.equal([
        '{"jsonrpc":"2.0","id":"1","result":{"slept":10}}',
        '{"jsonrpc":"2.0","id":1,"result":{"slept":20}}',
      ]);
    });

    it('echoes ids that parse to a safe integer byte for byte, apart from a real request 0', async () => {
      const start = peer.stdout.lines.length;
      peer.send(
        '{"jsonrpc":"2.0","id":1e-400,"method":"sleep","params":{"ms":20}}',
        '{"jsonrpc":"2.0","id":0,"method":"sleep","params":{"ms":10}}',
        '{"jsonrpc":"2.0","id":1.0000000000000000001,"method":"echo","params":["a"]}',
        '{"jsonrpc":"2.0","id":-0,"method":"missing"}',
      );
      const lines = (await peer.stdout.waitForLines(start + 4)).slice(start);
      expect(lines.sort()).to.deep.equal([
        '{"jsonrpc":"2.0","id":-0,"error":{"code":-32601,"message":"Method not found","data":"missing"}}',
        '{"jsonrpc":"2.0","id":0,"result":{"slept":10}}',
        '{"jsonrpc":"2.0","id":1.0000000000000000001,"result":["a"]}',
        '{"jsonrpc":"2.0","id":1e-400,"result":{"slept":20}}',
      ]);
    });

    itAnswersConcurrentRequests(() => ({ send: peer.send, lines: peer.stdout }));

    it('writes nothing but protocol lines on stdout', () => {
      for (const line of peer.stdout.lines) expect(() => JSON.parse(line) as unknown, line).not.to.throw();
      expect(peer.stdout.rest).to.equal('');
    });
  });

  describe('the peer process', () => {
    it('exits 0 by itself when its stdin ends, after writing the answers already due', async () => {
      const peer = spawnFixture('echo-peer');
      peer.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['due'] });
      peer.child.stdin!.end();
      expect(await peer.exited).to.deep.equal({ code: 0, signal: null });
      expect(peer.stdout.lines).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["due"]}']);
    });

    it('with ACP_WIRE_LOG=trace logs every line sent and received with direction and time on stderr, and nothing extra on stdout', async () => {
      const peer = spawnFixture('echo-peer', [], { env: { ACP_WIRE_LOG: 'trace' } });
      const request = '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"t":1}}';
      const answer = '{"jsonrpc":"2.0","id":1,"result":{"t":1}}';
      peer.send(request);
      expect(await peer.stdout.waitForLines(1)).to.deep.equal([answer]);
      expect(await peer.stop()).to.deep.equal({ code: 0, signal: null });
      expect(peer.stdout.lines).to.deep.equal([answer]);
      expect(peer.stdout.rest).to.equal('');
      const trace = peer.stderr.text.split('\n').filter((line) => / trace /.test(line));
      const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
      expect(trace).to.have.length(2);
      expect(trace[0]).to.match(new RegExp(`^${time} echo-peer trace <- ${escapeRegExp(request)}$`));
      expect(trace[1]).to.match(new RegExp(`^${time} echo-peer trace -> ${escapeRegExp(answer)}$`));
    });

    it('exiting mid-request rejects the pending requests with ConnectionClosedError', async () => {
      const { connection, exited } = spawnConnection(process.execPath, fixtureArgs('echo-peer'), { env: fixtureEnv(), stderr: 'ignore' });
      const sleeping = connection.sendRequest('sleep', { ms: 60_000 });
      const exiting = connection.sendRequest('exit', { code: 3 });
      const errors = await Promise.all(
        [sleeping, exiting].map((sent) =>
          sent.then(
            () => undefined,
            (error: unknown) => error,
          ),
        ),
      );
      expect(errors[0]).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'sleep' });
      expect(errors[1]).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'exit' });
      expect((errors[0] as ConnectionClosedError).reason).to.be.oneOf(['peer exited', 'input ended']);
      expect(await exited).to.deep.equal({ code: 3, signal: null });
    });
  });

  describe('a client process', () => {
    it("exits 0 by itself after closing its connection, with the child's stderr passed through and not mixed into stdout", async () => {
      const client = spawnFixture('echo-client');
      expect(await client.exited).to.deep.equal({ code: 0, signal: null });
      expect(client.stdout.lines).to.deep.equal(['true', '{"hello":"world"}']);
      expect(client.stdout.rest).to.equal('');
      expect(client.stderr.text).to.equal('echo-peer says hello on stderr\n');
    });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
