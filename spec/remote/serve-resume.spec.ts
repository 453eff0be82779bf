/**
 * `acp-wire serve --resume` with the conformance agent as a real process, behind a fault proxy
 * that resets connections at random moments (seeded; `RESUME_SEED` replays a run): the same agent
 * process serves the whole conversation, every update arrives once and in order. Needs dist/.
 */
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { ServerGoingAwayError, type Connection } from '../../lib';
import { startFaultProxy, type Direction, type FaultProxy } from '../fixtures/fault-proxy';
import { childProcesses } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, spawnScript, stopAll, useBuild, type SpawnedProcess } from '../helpers/processes';
import { connectResuming, recordTurns, seededRandom, type ResumeTransport } from './resume-helpers';

const SEED = Number(process.env.RESUME_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RESETS = 20;

describe('acp-wire serve --resume (real processes)', () => {
  useBuild();
  let serve: SpawnedProcess | undefined;
  let proxy: FaultProxy | undefined;

  before(() => console.log(`      serve --resume specs: RESUME_SEED=${SEED}`));
  afterEach(async () => {
    await proxy?.close();
    serve?.child.kill('SIGTERM');
    await serve?.exited;
    await stopAll();
  });

  for (const [index, transport] of (['websocket', 'http'] as const satisfies readonly ResumeTransport[]).entries()) {
    it(`${transport}: ${RESETS} resets during streamed v1 turns: one agent process, every chunk once and in order`, async function () {
      this.timeout(60_000);
      const random = seededRandom(SEED + index);
      serve = spawnScript(CLI, ['serve', '--resume', '--resume-grace', '20000', `${process.execPath} ${CONFORMANCE_AGENT}`]);
      const port = Number(/:(\d+)\//.exec(await serve.stdout.take())![1]);
      proxy = await startFaultProxy(port);
      const url = `${transport === 'websocket' ? 'ws' : 'http'}://127.0.0.1:${proxy.port}/acp`;
      let resumes = 0;
      const client: Connection = await connectResuming(url, transport, {
        attempts: 50,
        minDelayMs: 2,
        maxDelayMs: 40,
        onResumed: () => void resumes++,
      });
      await client.sendRequest('initialize', { protocolVersion: 1 });
      const { sessionId } = (await client.sendRequest('session/new', { cwd: '/', mcpServers: [] })) as { sessionId: string };
      const agents = childProcesses(serve.child.pid!).map((child) => child.pid);
      expect(agents).to.have.length(1);
      const log = recordTurns(client, sessionId);
      const texts: string[] = [];
      let isDone = false;
      const turns = (async () => {
        for (let t = 0; !isDone; t++) {
          texts.push(Array.from({ length: 10 }, (_, k) => `t${t}w${k}`).join(' '));
          log.startTurn();
          const answer = (await client.sendRequest('session/prompt', {
            sessionId,
            prompt: [{ type: 'text', text: texts[t] }],
            _meta: { workMs: 30 },
          })) as {
            stopReason: string;
          };
          log.stops.push(answer.stopReason);
        }
      })();
      for (let r = 0; r < RESETS; r++) {
        await delay(random() * 20);
        const reset = proxy.nextReset();
        proxy.resetAfter((random() < 0.5 ? 'toClient' : 'toTarget') as Direction, 1 + Math.floor(random() * 400));
        await reset;
      }
      isDone = true;
      await turns;
      for (const [t, chunks] of log.chunks.entries()) expect(chunks, `turn ${t}`).to.deep.equal(`echo: ${texts[t]}`.match(/\S+\s*/g));
      expect(log.stops).to.deep.equal(texts.map(() => 'end_turn'));
      expect(resumes).to.be.greaterThan(0);
      expect(childProcesses(serve.child.pid!).map((child) => child.pid)).to.deep.equal(agents);
      await client.close();
    });
  }

  for (const transport of ['websocket', 'http'] as const satisfies readonly ResumeTransport[]) {
    it(`${transport}: SIGTERM closes an idle client at once and a busy one after its turn, with ServerGoingAwayError, and neither resumes`, async function () {
      this.timeout(30_000);
      serve = spawnScript(CLI, ['serve', '--resume', `${process.execPath} ${CONFORMANCE_AGENT}`]);
      const url = (await serve.stdout.take()).replace(/^listening /, '').replace(/^ws:/, transport === 'websocket' ? 'ws:' : 'http:');
      let attempts = 0;
      const reconnect = { onReconnecting: () => void attempts++ };
      const [idle, busy] = [await connectResuming(url, transport, reconnect), await connectResuming(url, transport, reconnect)];
      for (const client of [idle, busy]) await client.sendRequest('initialize', { protocolVersion: 1 });
      const { sessionId } = (await busy.sendRequest('session/new', { cwd: '/', mcpServers: [] })) as { sessionId: string };
      const events: string[] = [];
      const closed = [idle, busy].map(
        (client, index) =>
          new Promise<Error | undefined>((resolve) =>
            client.once('close', (_reason, error) => {
              events.push(`${index === 0 ? 'idle' : 'busy'} closed`);
              resolve(error);
            }),
          ),
      );
      const answered = busy
        .sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a b c' }], _meta: { workMs: 500 } })
        .then((answer) => (events.push('busy answered'), answer));
      await busy.sendRequest('_test/echo', {}); // the prompt has reached the agent
      serve.child.kill('SIGTERM');
      expect(await answered).to.include({ stopReason: 'end_turn' });
      for (const error of await Promise.all(closed)) expect(error).to.be.instanceOf(ServerGoingAwayError);
      expect(events).to.deep.equal(['idle closed', 'busy answered', 'busy closed']);
      expect(await serve.exited).to.deep.equal({ code: 0, signal: null });
      expect(attempts, 'resume attempts').to.equal(0);
    });
  }
});
