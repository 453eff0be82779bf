import { expect } from 'chai';
import { ConnectionClosedError, spawnConnection, type CloseReason } from '../../lib';
import { nextEvent } from '../helpers/events';
import { LineReader } from '../helpers/lines';
import { fixtureArgs, fixtureEnv, useBuild } from '../helpers/processes';

/** The node arguments that run echo-peer (set once the build is fresh). */
let ECHO_PEER: string[];

describe('spawnConnection()', () => {
  useBuild();
  before(() => {
    ECHO_PEER = fixtureArgs('echo-peer');
  });

  it("connects to the child's stdin/stdout, and close() ends its stdin and resolves with its exit", async () => {
    const { connection, close } = spawnConnection(process.execPath, ECHO_PEER, { env: fixtureEnv() });
    expect(await connection.sendRequest('echo', ['over stdio'])).to.deep.equal(['over stdio']);
    expect(await close()).to.deep.equal({ code: 0, signal: null });
    expect(connection.closeReason).to.equal('closed locally');
  });

  it("captures the child's stderr with stderr: 'pipe', apart from the protocol", async () => {
    const { connection, child, close } = spawnConnection(process.execPath, ECHO_PEER, { env: fixtureEnv(), stderr: 'pipe' });
    const stderr = new LineReader(child.stderr!, { label: 'echo-peer stderr' });
    const errors: string[] = [];
    connection.on('error', (error) => errors.push(error.message));
    expect(await connection.sendRequest('log', { text: 'a line for stderr' })).to.equal(true);
    await stderr.find((_, line) => line === 'a line for stderr');
    expect(await close()).to.deep.equal({ code: 0, signal: null });
    expect(stderr.text).to.equal('a line for stderr\n');
    expect(errors, 'nothing from stderr reached the protocol stream').to.deep.equal([]);
  });

  it("gives the child no stderr stream with stderr: 'ignore'", async () => {
    const { child, close } = spawnConnection(process.execPath, ['-e', ''], { stderr: 'ignore' });
    expect(child.stderr).to.equal(null);
    expect(await close()).to.deep.equal({ code: 0, signal: null });
  });

  it("closes with reason 'peer exited' and the spawn error when the command cannot start, failing pending requests", async () => {
    const { connection, exited } = spawnConnection('/nonexistent/acp-wire-peer', []);
    const closed = nextEvent<[CloseReason, Error?]>(connection, 'close');
    const sent = connection.sendRequest('never');
    const [reason, error] = await closed;
    expect(reason).to.equal('peer exited');
    expect(error).to.have.property('code', 'ENOENT');
    expect(await sent.then(() => undefined, (e: unknown) => e)).to.be.instanceOf(ConnectionClosedError).and.include({ method: 'never' });
    expect(await exited).to.include({ code: null, signal: null }).and.have.property('error', error);
  });

  it('kills a child that does not exit after its stdin ends, after killTimeoutMs', async () => {
    const { close } = spawnConnection(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { killTimeoutMs: 50 });
    expect(await close()).to.deep.equal({ code: null, signal: 'SIGTERM' });
  });

  it('throws RangeError for a negative killTimeoutMs', () => {
    expect(() => spawnConnection(process.execPath, [], { killTimeoutMs: -1 })).to.throw(RangeError, /killTimeoutMs/);
  });
});
