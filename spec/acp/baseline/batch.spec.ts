/**
 * JSON-RPC 2.0 batches as the ACP TCK checks them on v2 (ACP-BATCH-201..205), against `AcpAgent`
 * in process and against the conformance agent alone and behind `acp-wire conduct` with two
 * passthrough proxies: the same answers at every hop. ACP v1 keeps its one `-32600`.
 */
import { expect } from 'chai';
import { AGENT_COMMAND, PASSTHROUGH_COMMAND, spawnConductor } from '../../helpers/chain';
import { CLIENT_INIT, spawnAgent } from '../../helpers/conformance-agent';
import { useBuild, type SpawnedProcess } from '../../helpers/processes';
import { AgentUnderTest } from '../../helpers/baseline';

const EMPTY_BATCH = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"an empty batch"}}';
const NOT_AN_OBJECT =
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"a message must be a JSON object"}}';
const REFUSED = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"batches are not supported"}}';

/** Sends `line`, then a probe request; resolves with every line before the probe's answer. */
async function answersTo(
  target: { send(...items: unknown[]): void; stdout: SpawnedProcess['stdout'] },
  line: string,
  probe: string,
): Promise<string[]> {
  target.send(line, { jsonrpc: '2.0', id: probe, method: 'session/list', params: {} });
  return (await target.stdout.takeUntil((m) => m.id === probe)).slice(0, -1);
}

/** The entries of a batch answer, sorted by id (their order is free). */
function entries(line: string): unknown[] {
  return (JSON.parse(line) as { id: number }[]).sort((a, b) => a.id - b.id);
}

/** The TCK's batch rows, run against a v2 agent reached over `target`'s stdio. */
function batchRows(start: () => Promise<SpawnedProcess>): void {
  let target: SpawnedProcess;
  before(async () => {
    target = await start();
    const init = JSON.parse(await target.request('init', 'initialize', CLIENT_INIT)) as { result?: { protocolVersion: number } };
    expect(init.result?.protocolVersion).to.equal(2);
  });
  after(() => target.stop());

  it('ACP-BATCH-201: answers an empty batch with one -32600 whose id is null', async () => {
    expect(await answersTo(target, '[]', 'p1')).to.deep.equal([EMPTY_BATCH]);
  });

  it('ACP-BATCH-202: sends nothing for a batch that holds only notifications', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'none' } },
      { jsonrpc: '2.0', method: '_test/anything', params: {} },
    ]);
    expect(await answersTo(target, batch, 'p2')).to.deep.equal([]);
  });

  it('ACP-BATCH-203/204: answers [17,true,null] with one array of three -32600, one per entry', async () => {
    expect(await answersTo(target, '[17,true,null]', 'p3')).to.deep.equal([`[${NOT_AN_OBJECT},${NOT_AN_OBJECT},${NOT_AN_OBJECT}]`]);
  });

  it('ACP-BATCH-205: answers a batch of two session/list requests with one array holding both answers', async () => {
    const batch = JSON.stringify([1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'session/list', params: {} })));
    const lines = await answersTo(target, batch, 'p4');
    expect(lines).to.have.length(1);
    const answers = entries(lines[0]!) as { id: number; result: { sessions: unknown[] } }[];
    expect(answers.map((a) => a.id)).to.deep.equal([1, 2]);
    for (const answer of answers) expect(answer.result.sessions).to.be.an('array');
  });
}

describe('JSON-RPC 2.0 batches on ACP v2 (the TCK batch rows)', () => {
  describe('AcpAgent in process', () => {
    let under: AgentUnderTest;
    afterEach(() => under.close());

    it('answers batches once v2 is negotiated, and refuses them before initialize and in v1', async () => {
      under = new AgentUnderTest();
      under.peer.send('[]');
      expect(await under.peer.linesBeforeProbe(1)).to.deep.equal([REFUSED]);
      await under.initialize(2);
      under.peer.send('[]');
      expect(await under.peer.linesBeforeProbe(2)).to.deep.equal([EMPTY_BATCH]);
      const v1 = new AgentUnderTest();
      try {
        await v1.initialize(1);
        v1.peer.send('[{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}]');
        expect(await v1.peer.linesBeforeProbe(3)).to.deep.equal([REFUSED]);
      } finally {
        await v1.close();
      }
    });

    it('handles session/new and session/prompt entries as single requests: the prompt of a batch runs its turn', async () => {
      under = new AgentUnderTest();
      await under.initialize(2);
      const sessionId = await under.newSession('/work');
      under.peer.send([
        { jsonrpc: '2.0', id: 'a', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'one' }] } },
        { jsonrpc: '2.0', id: 'b', method: 'session/list', params: {} },
      ]);
      const idle = await under.untilIdle(sessionId);
      const answer = idle.find((m) => Array.isArray(m)) as unknown as { id: string }[];
      expect(answer.map((a) => a.id).sort()).to.deep.equal(['a', 'b']);
      expect(idle.pop()!.params!.update).to.deep.include({ stopReason: 'end_turn' });
    });
  });

  describe('the conformance agent alone', () => {
    useBuild();
    batchRows(async () => spawnAgent());
  });

  describe('the conformance agent behind acp-wire conduct with two passthrough proxies', () => {
    useBuild();
    batchRows(async () => spawnConductor([PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND]));
  });

  describe('ACP v1 through the conductor', () => {
    useBuild();
    it('keeps one -32600 with id null for a batch', async () => {
      const conductor = spawnConductor([PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND]);
      try {
        await conductor.request('init', 'initialize', { ...CLIENT_INIT, protocolVersion: 1 });
        expect(await answersTo(conductor, '[{"jsonrpc":"2.0","method":"x"}]', 'p')).to.deep.equal([REFUSED]);
      } finally {
        await conductor.stop();
      }
    });
  });
});
