/**
 * claude-code-acp, the real agent, directly and through `acp-wire conduct`: it needs a Claude login
 * for a session, which this machine does not have, so its `session/new` fails, and that error must
 * reach the client as the agent sent it.
 */
import { expect } from 'chai';
import { AcpClient, RpcError, spawnConnection, type ChildConnection } from '../../lib';
import type { LineReader } from '../helpers/lines';
import { descendants, isRunning } from '../helpers/process-table';
import { CLI, PASSTHROUGH_PROXY, ROOT, useBuild } from '../helpers/processes';
import {
  REAL_PEERS,
  commandLine,
  installedVersion,
  makeTempHome,
  peerReader,
  processesWithHome,
  requireRealPeers,
  type TempHome,
} from '../helpers/real-peers';

interface Run {
  readonly peer: ChildConnection;
  readonly stdout: LineReader;
  readonly stderr: LineReader;
  readonly client: AcpClient;
}

/** The parsed line that answers request `id`. */
function answerLine(stdout: LineReader, id: unknown): Record<string, unknown> {
  const answers = stdout.lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((message) => message.id === id && !('method' in message));
  expect(answers, `answers to request ${String(id)}`).to.have.lengthOf(1);
  return answers[0]!;
}

describe(`claude-code-acp ${installedVersion('@zed-industries/claude-code-acp')} (real agent), directly and through acp-wire conduct`, function () {
  this.timeout(60_000);
  useBuild();
  let home: TempHome;
  let direct: Run;
  let conducted: Run;

  function start(argv: readonly string[], label: string): Run {
    const [command, ...args] = argv;
    const peer = spawnConnection(command!, args, { cwd: ROOT, env: home.env(), stderr: 'pipe' });
    return {
      peer,
      stdout: peerReader(peer.child.stdout!, `${label} stdout`),
      stderr: peerReader(peer.child.stderr!, `${label} stderr`),
      client: new AcpClient(peer.connection),
    };
  }

  before(async () => {
    requireRealPeers();
    home = await makeTempHome('claude-code');
    direct = start([process.execPath, REAL_PEERS.claudeCodeAcp], 'claude-code-acp');
    conducted = start(
      [
        process.execPath,
        CLI,
        'conduct',
        commandLine('node', PASSTHROUGH_PROXY),
        commandLine('node', PASSTHROUGH_PROXY),
        commandLine('node', REAL_PEERS.claudeCodeAcp),
      ],
      'acp-wire conduct',
    );
  });

  after(async () => {
    await Promise.all([direct?.peer.close(), conducted?.peer.close()]);
    await home?.remove();
  });

  it('negotiates ACP v1 when offered v2, and the conductor passes its initialize answer on unchanged', async () => {
    const [alone, chained] = await Promise.all([direct.client.initialize(), conducted.client.initialize()]);
    expect(alone.protocolVersion).to.equal(1);
    expect(chained.protocolVersion).to.equal(1);
    expect(conducted.client.protocolVersion).to.equal(1);
    const aloneLine = answerLine(direct.stdout, 1);
    const chainedLine = answerLine(conducted.stdout, 1);
    expect(JSON.stringify(chainedLine.result)).to.equal(JSON.stringify(aloneLine.result));
  });

  it('its session/new error reaches the client through the conductor exactly as the agent sent it', async () => {
    const outcomes = await Promise.all(
      [direct, conducted].map(({ client }) =>
        client.newSession({ cwd: home.path }).then(
          () => undefined,
          (error: unknown) => error,
        ),
      ),
    );
    for (const outcome of outcomes) expect(outcome, 'session/new without a login').to.be.instanceOf(RpcError);
    const [alone, chained] = outcomes as RpcError[];
    expect(chained!.toJSON()).to.deep.equal(alone!.toJSON());
    const aloneError = answerLine(direct.stdout, 2).error as Record<string, unknown>;
    const chainedError = answerLine(conducted.stdout, 2).error as Record<string, unknown>;
    expect(aloneError.code).to.be.a('number');
    // Byte for byte, key order included.
    expect(JSON.stringify(chainedError)).to.equal(JSON.stringify(aloneError));
  });

  it('leaves no process behind once closed', async () => {
    const trees = [direct, conducted].map(({ peer }) => [peer.child.pid!, ...descendants(peer.child.pid!)]);
    await Promise.all([direct.peer.close(), conducted.peer.close()]);
    expect(trees.flat().filter(isRunning), 'processes of the trees still running').to.deep.equal([]);
    expect(processesWithHome(home), 'processes started with this HOME still running').to.deep.equal([]);
  });
});
