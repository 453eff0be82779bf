/**
 * The Conductor's start and end: a component that cannot be started, a bounded close with a
 * component that never reads its stdin, `Symbol.asyncDispose`.
 */
import { expect } from 'chai';
import { Conductor, RpcError, type ChildExit } from '../../lib';
import { PASSTHROUGH_COMMAND } from '../helpers/chain';
import { tappedPair, type TappedPair } from '../helpers/peers';
import { pidExists } from '../helpers/process-table';
import { useBuild } from '../helpers/processes';

const MISSING = 'acp-wire-no-such-program --flag';

/** The data of the answer to every request of a chain whose `command` could not be started. */
function notStartedData(component: string, command: string, code: string, program: string): unknown {
  return { reason: 'component_not_started', component, command, code, cause: `spawn ${program} ${code}` };
}

describe('Conductor lifecycle', function () {
  this.timeout(30000);
  useBuild();

  let client: TappedPair;
  beforeEach(() => {
    client = tappedPair();
  });
  afterEach(() => client.close());

  describe('when a component cannot be started', () => {
    it('answers every request the client sends -32603, naming the component, its command and the cause (ENOENT)', async () => {
      const conductor = new Conductor({ client: client.right, components: [MISSING], stderr: 'ignore' });
      for (const [method, id] of [
        ['initialize', 1],
        ['session/new', 2],
      ] as const) {
        const error = await client.left.sendRequest(method, {}).then(undefined, (e: unknown) => e);
        expect(error)
          .to.be.instanceOf(RpcError)
          .and.deep.include({
            code: -32603,
            data: notStartedData('agent', MISSING, 'ENOENT', 'acp-wire-no-such-program'),
          });
        expect(await client.fromRight.take()).to.equal(
          `{"jsonrpc":"2.0","id":${id},"error":{"code":-32603,"message":"Internal error","data":${JSON.stringify(notStartedData('agent', MISSING, 'ENOENT', 'acp-wire-no-such-program'))}}}`,
        );
      }
      await conductor.close();
    });

    it('names a proxy that is not executable (EACCES) and stops the components that did start', async () => {
      const conductor = new Conductor({ client: client.right, components: [__dirname, PASSTHROUGH_COMMAND], stderr: 'ignore' });
      const error = await client.left.sendRequest('initialize', {}).then(undefined, (e: unknown) => e);
      expect(error).to.deep.include({ code: -32603, data: notStartedData('proxy1', __dirname, 'EACCES', __dirname) });
      expect(await conductor.components[1]!.exited).to.deep.equal({ code: 0, signal: null });
      await conductor.close();
    });

    it("closes the client once it has sent nothing for notStartedLingerMs, with reason 'component not started'", async () => {
      const conductor = new Conductor({ client: client.right, components: [MISSING], stderr: 'ignore', notStartedLingerMs: 10 });
      const outcome = await conductor.closed;
      expect(outcome).to.deep.include({
        reason: 'component not started',
        message: `agent (${MISSING}) could not be started (spawn acp-wire-no-such-program ENOENT)`,
      });
      expect(outcome.component!.name).to.equal('agent');
      expect(client.right.isClosed).to.equal(true);
    });

    it("reports 'component not started' when the client goes away first", async () => {
      const conductor = new Conductor({ client: client.right, components: [MISSING], stderr: 'ignore' });
      await client.left.close();
      expect(await conductor.closed).to.deep.include({ reason: 'component not started' });
    });

    it('throws RangeError for a negative notStartedLingerMs, starting nothing', () => {
      expect(() => new Conductor({ client: client.right, components: [MISSING], notStartedLingerMs: -1 })).to.throw(
        RangeError,
        /notStartedLingerMs/,
      );
    });
  });

  describe('#close()', () => {
    it('ends a component that never reads its stdin while bytes are queued for it', async () => {
      let forwarded!: () => void;
      const isForwarded = new Promise<void>((resolve) => (forwarded = resolve));
      const conductor = new Conductor({
        client: client.right,
        components: [{ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] }],
        killTimeoutMs: 50,
        // Tells when the request has been written towards the agent.
        logger: () => ({ traces: true, log: (_level, message) => void (message.startsWith('-> {"jsonrpc":"2.0","id":1,') && forwarded()) }),
      });
      const agent = conductor.components[0]!;
      // More than a pipe holds: the rest stays queued in the conductor, never read.
      void client.left.sendRequest('_test/echo', { big: 'x'.repeat(4 << 20) }).then(undefined, () => undefined);
      await isForwarded;
      const outcome = await conductor.close();
      expect(outcome.reason).to.be.oneOf(['closed locally', 'component ended']);
      const exit = (await agent.exited) as ChildExit;
      expect(exit.signal).to.be.oneOf(['SIGTERM', 'SIGKILL']);
      expect(pidExists(agent.child!.pid!)).to.equal(false);
    });
  });

  describe('[Symbol.asyncDispose]()', () => {
    it('closes the chain at the end of an `await using` scope, reaping every child', async () => {
      let components: Conductor['components'] = [];
      {
        await using conductor = new Conductor({
          client: client.right,
          components: [PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND],
          stderr: 'ignore',
        });
        components = conductor.components;
      }
      expect(components.map((component) => component.child!.exitCode)).to.deep.equal([0, 0]);
      expect(client.right.isClosed).to.equal(true);
    });
  });
});
