import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { ConnectionClosedError, spawnConnection, type ChildConnection, type CloseReason } from '../../lib';
import { nextEvent } from '../helpers/events';
import { LineReader } from '../helpers/lines';
import { descendants, isRunning, processesEnded } from '../helpers/process-table';
import { ROOT, WRAPPER_ARGS, fixtureArgs, fixtureEnv, useBuild } from '../helpers/processes';

/**
 * `killTimeoutMs` for children expected to end on SIGTERM: long enough for a busy machine to run
 * the child and deliver the signal before the SIGKILL that follows one more timeout later.
 */
const TERM_GRACE_MS = 500;

/** The node arguments that run echo-peer (set once the build is fresh). */
let ECHO_PEER: string[];

describe('spawnConnection()', () => {
  useBuild();
  before(() => {
    ECHO_PEER = fixtureArgs('echo-peer');
  });

  it('is closed by `await using`: leaving the block ends the child and closes the connection', async () => {
    let seen: ReturnType<typeof spawnConnection> | undefined;
    {
      await using spawned = spawnConnection(process.execPath, ECHO_PEER, { env: fixtureEnv() });
      seen = spawned;
      expect(await spawned.connection.sendRequest('echo', ['inside'])).to.deep.equal(['inside']);
    }
    expect(seen.connection.closeReason).to.equal('closed locally');
    expect(seen.child.exitCode).to.equal(0);
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
    connection.on('warning', (error) => errors.push(error.message));
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
    expect(
      await sent.then(
        () => undefined,
        (e: unknown) => e,
      ),
    )
      .to.be.instanceOf(ConnectionClosedError)
      .and.include({ method: 'never' });
    expect(await exited)
      .to.include({ code: null, signal: null })
      .and.have.property('error', error);
  });

  it('kills a child that does not exit after its stdin ends, after killTimeoutMs', async () => {
    const { close } = spawnConnection(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { killTimeoutMs: TERM_GRACE_MS });
    expect(await close()).to.deep.equal({ code: null, signal: 'SIGTERM' });
  });

  it('throws RangeError for a negative killTimeoutMs', () => {
    expect(() => spawnConnection(process.execPath, [], { killTimeoutMs: -1 })).to.throw(RangeError, /killTimeoutMs/);
  });

  describe('#close() and the process tree', () => {
    /** Waits for `pattern` on the child's stderr and returns the pids of the child and its descendants. */
    async function treeOf(spawned: ChildConnection, stderr: LineReader, pattern: RegExp): Promise<number[]> {
      await stderr.findText(pattern);
      return [spawned.child.pid!, ...descendants(spawned.child.pid!)];
    }

    it("ends a `sh -c` job's background process, not only the shell", async () => {
      const spawned = spawnConnection('sh', ['-c', 'sleep 1000 & echo "started $!" >&2; wait'], {
        stderr: 'pipe',
        killTimeoutMs: TERM_GRACE_MS,
      });
      const stderr = new LineReader(spawned.child.stderr!, { label: 'child stderr' });
      const tree = await treeOf(spawned, stderr, /started \d+\n/);
      const sleeper = Number(/started (\d+)/.exec(stderr.text)![1]);
      expect(tree).to.include(sleeper).and.have.lengthOf(2);
      expect(await spawned.close()).to.deep.equal({ code: null, signal: 'SIGTERM' });
      expect(tree.filter(isRunning), 'processes of the tree still running').to.deep.equal([]);
    });

    it('ends the binary a wrapper script launched, not only the wrapper', async () => {
      const spawned = spawnConnection(process.execPath, WRAPPER_ARGS, { stderr: 'pipe', killTimeoutMs: TERM_GRACE_MS });
      const stderr = new LineReader(spawned.child.stderr!, { label: 'child stderr' });
      const tree = await treeOf(spawned, stderr, /grandchild \d+\n/);
      const grandchild = Number(/grandchild (\d+)/.exec(stderr.text)![1]);
      expect(tree).to.include(grandchild);
      await spawned.close();
      expect(tree.filter(isRunning), 'processes of the tree still running').to.deep.equal([]);
    });

    it('ends what is left of the tree when the child itself has already exited', async () => {
      // 500 ms per step (SIGTERM, then SIGKILL): on a loaded machine 50 ms could pass before the
      // killed job's state changed, and close() resolves once the steps have passed.
      const spawned = spawnConnection('sh', ['-c', 'sleep 1000 & echo "started $!" >&2'], { stderr: 'pipe', killTimeoutMs: 500 });
      const stderr = new LineReader(spawned.child.stderr!, { label: 'child stderr' });
      await stderr.findText(/started \d+\n/);
      const sleeper = Number(/started (\d+)/.exec(stderr.text)![1]);
      expect(await spawned.exited).to.deep.equal({ code: 0, signal: null });
      expect(isRunning(sleeper), 'the orphaned background job runs before close()').to.equal(true);
      expect(await spawned.close()).to.deep.equal({ code: 0, signal: null });
      expect(isRunning(sleeper)).to.equal(false);
    });

    it('SIGTERMs the tree when its owner exits without closing it', async () => {
      const owner = spawn(process.execPath, fixtureArgs('process-tree'), {
        cwd: ROOT,
        env: fixtureEnv(),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = nextEvent<[number | null]>(owner, 'exit');
      const [line] = await new LineReader(owner.stdout!, { label: 'owner stdout' }).waitForLines(1);
      const [, wrapper, grandchild] = /^tree (\d+) (\d+)$/.exec(line!)!.map(Number);
      expect(await exited).to.deep.equal([0, null]);
      await processesEnded([wrapper!, grandchild!]);
    });

    it('starts the kill escalation even when megabytes are queued for a child that never reads its stdin', async () => {
      const ignoresTerm = "process.on('SIGTERM', () => {}); process.stderr.write('ready\\n'); setInterval(() => {}, 1e6)";
      const spawned = spawnConnection(process.execPath, ['-e', ignoresTerm], { stderr: 'pipe', killTimeoutMs: 50 });
      await new LineReader(spawned.child.stderr!, { label: 'child stderr' }).findText(/ready\n/);
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 64; i++) spawned.connection.sendNotification('fill', { chunk });
      // Let the writer hand the 4 MiB to the pipe, which holds 64 KiB: the rest stays queued.
      await new Promise((resolve) => setImmediate(resolve));
      expect(spawned.child.stdin!.writableLength).to.be.greaterThan(1024 * 1024);
      expect(await spawned.close()).to.deep.equal({ code: null, signal: 'SIGKILL' });
      expect(isRunning(spawned.child.pid!)).to.equal(false);
    });

    it('resolves every call of close() with the same exit', async () => {
      const spawned = spawnConnection(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { killTimeoutMs: TERM_GRACE_MS });
      const [first, second] = await Promise.all([spawned.close(), spawned.close()]);
      expect(first).to.deep.equal({ code: null, signal: 'SIGTERM' });
      expect(second).to.equal(first);
    });
  });
});
