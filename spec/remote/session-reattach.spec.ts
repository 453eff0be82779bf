/**
 * An AcpClient whose transport could not resume its connection (the server forgot the cursor)
 * re-attaches its sessions on a new connection: `session/resume` (ACP v2) or `session/load`
 * (ACP v1); requests pending on the lost connection reject once; a closed client never reconnects.
 */
import { expect } from 'chai';
import { AcpClient, ConnectionClosedError, ResumeFailedError, type Connection, type ReattachedEvent } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { connectResuming, useResumeBenches, type ResumeBench, type ResumeTransport } from './resume-helpers';

const SLOW_RESUME = { minDelayMs: 400, maxDelayMs: 400 };
const WORDS = Array.from({ length: 30 }, (_, k) => `w${k}`).join(' ');

/** Resolves with the first agent message chunk `client` receives. */
function firstChunk(client: AcpClient): Promise<void> {
  return new Promise((resolve) => {
    const subscription = client.onSessionUpdate(({ update }) => {
      if (update.sessionUpdate !== 'agent_message_chunk') return;
      subscription[Symbol.dispose]();
      resolve();
    });
  });
}

/** A client that re-attaches over `transport`, and the promise of its first fallback. */
async function reattachingClient(
  url: string,
  transport: ResumeTransport,
): Promise<{ client: AcpClient; first: Connection; reattached: Promise<ReattachedEvent> }> {
  let onReattached!: (event: ReattachedEvent) => void;
  const reattached = new Promise<ReattachedEvent>((resolve) => (onReattached = resolve));
  const first = await connectResuming(url, transport, SLOW_RESUME);
  const client = new AcpClient(first, { reattach: { connect: () => connectResuming(url, transport, SLOW_RESUME), onReattached } });
  return { client, first, reattached };
}

async function textOf(client: AcpClient, sessionId: string, text: string): Promise<{ text: string; stopReason: string }> {
  const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text }] });
  let reply = '';
  for await (const update of turn) {
    const content = (update as { content?: { text?: string } }).content;
    if (update.sessionUpdate === 'agent_message_chunk') reply += content?.text ?? '';
  }
  return { text: reply, stopReason: (await turn).stopReason };
}

describe('AcpClient re-attaching its sessions when a resume is refused', () => {
  let bench: ResumeBench | undefined;
  const startBench = useResumeBenches();

  for (const transport of ['websocket', 'http'] as const) {
    for (const version of [2, 1] as const) {
      const method = version === 2 ? 'session/resume' : 'session/load';
      it(`${transport}, ACP v${version}: re-attaches the session with ${method}, rejects the lost requests once, and a new turn works`, async function () {
        this.timeout(20_000);
        // A buffer of 5 messages: the turn's 30 chunks outrun it, so the resume is refused.
        bench = await startBench({ graceMs: 1000, bufferMessages: 5 });
        const { client, first, reattached } = await reattachingClient(bench.url(transport), transport);
        await client.initialize({ protocolVersion: version });
        const { sessionId } = await client.newSession({ cwd: '/' });
        const sleeping = first.sendRequest('_test/sleep', { ms: 60_000 });
        let rejections = 0;
        sleeping.then(undefined, () => void rejections++);
        const started = firstChunk(client);
        const turn = client.prompt({ sessionId, prompt: [{ type: 'text', text: WORDS }], _meta: { workMs: 100 } });
        await started;
        bench.proxy.resetAfter('toClient', 1);

        const error = await rejectionOf<ConnectionClosedError>(sleeping);
        expect(error).to.be.instanceOf(ConnectionClosedError);
        expect(error.cause).to.be.instanceOf(ResumeFailedError).and.include({ reason: 'refused' });
        const turnError = await rejectionOf<ConnectionClosedError>(turn);
        expect(turnError).to.be.instanceOf(ConnectionClosedError);
        expect(turnError.cause).to.be.instanceOf(ResumeFailedError);

        const event = await reattached;
        expect(event.sessions).to.deep.equal([sessionId]);
        expect(event.lost).to.deep.equal([]);
        expect(event.cause).to.be.instanceOf(ResumeFailedError);
        expect(event.connection).to.equal(client.connection).and.not.equal(first);
        expect(client.protocolVersion).to.equal(version);
        expect(await textOf(client, sessionId, 'again')).to.deep.equal({ text: 'echo: again', stopReason: 'end_turn' });
        expect(rejections, 'the lost request rejected once').to.equal(1);
        expect(bench.agents.length, 'agent connections').to.equal(2);
        await client.close();
      });
    }
  }

  for (const transport of ['websocket', 'http'] as const) {
    it(`${transport}: a client closed by its user never reconnects (one agent connection on the server)`, async function () {
      this.timeout(20_000);
      bench = await startBench({ graceMs: 60_000 });
      let connects = 0;
      const first = await connectResuming(bench.url(transport), transport, SLOW_RESUME);
      const client = new AcpClient(first, {
        reattach: { connect: () => (connects++, connectResuming(bench!.url(transport), transport, {})) },
      });
      await client.initialize();
      await client.newSession({ cwd: '/' });
      await client.close();
      expect((await bench.agents[0]!.closed).reason).to.equal('input ended');
      expect(connects).to.equal(0);
      expect(bench.agents.length).to.equal(1);
    });
  }
});
