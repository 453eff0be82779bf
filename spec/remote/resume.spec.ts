/**
 * Remote connections that survive a dropped connection (`listenRemote({ resume })`, clients with
 * `reconnect`), over WebSocket and Streamable HTTP, ACP v1 and v2, with the conformance agent
 * behind a fault proxy that resets connections at random moments (seeded: the seed is printed;
 * `RESUME_SEED=… RESUME_RESETS=…` replay a run).
 */
import { expect } from 'chai';
import { RpcError, type Connection } from '../../lib';
import type { Direction } from '../fixtures/fault-proxy';
import { rejectionOf } from '../helpers/async';
import {
  connectResuming,
  expectOneAgent,
  recordTurns,
  seededRandom,
  useResumeBenches,
  type ResumeBench,
  type ResumeTransport,
} from './resume-helpers';

const SEED = Number(process.env.RESUME_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RESETS = Number(process.env.RESUME_RESETS ?? 100);
const TRANSPORTS: readonly ResumeTransport[] = ['websocket', 'http'];

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The chunks the conformance agent streams for a prompt text. */
const expectedChunks = (text: string): string[] => `echo: ${text}`.match(/\S+\s*/g)!;

/** Runs turns, requests both ways and notifications on `client` until `isDone()`; returns what to check. */
async function runWorkload(client: Connection, version: number, isDone: () => boolean) {
  const callsByIndex = new Map<number, number>();
  client.onRequest('_test/clientEcho', (params) => {
    const { i } = params as { i: number };
    callsByIndex.set(i, (callsByIndex.get(i) ?? 0) + 1);
    return { i };
  });
  await client.sendRequest('initialize', { protocolVersion: version });
  const { sessionId } = (await client.sendRequest('session/new', { cwd: '/', mcpServers: [] })) as { sessionId: string };
  const log = recordTurns(client, sessionId);
  const texts: string[] = [];
  const answers = { prompts: [] as string[], echoes: [] as number[], errors: 0, calls: [] as number[] };
  const turns = async (): Promise<void> => {
    for (let t = 0; !isDone(); t++) {
      const text = Array.from({ length: 12 }, (_, k) => `t${t}w${k}`).join(' ');
      texts.push(text);
      log.startTurn();
      const idle = version === 2 ? log.whenStops(t + 1) : Promise.resolve();
      const answer = (await client.sendRequest('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text }],
        _meta: { workMs: 40 },
      })) as {
        stopReason?: string;
      };
      if (version === 1) log.stops.push(answer.stopReason ?? '?');
      answers.prompts.push(answer.stopReason ?? 'answered');
      await idle;
    }
  };
  const requests = async (): Promise<void> => {
    for (let i = 0; !isDone(); i++) {
      client.sendNotification('_test/note', { i });
      if (i % 10 === 9) {
        const error = await rejectionOf<RpcError>(client.sendRequest('_test/throw', { code: -32001, message: `no ${i}` }));
        if (error instanceof RpcError && error.code === -32001) answers.errors++;
      }
      const [echo, call] = await Promise.all([
        client.sendRequest('_test/echo', { i }) as unknown as Promise<{ i: number }>,
        client.sendRequest('_test/callClient', { method: '_test/clientEcho', params: { i } }) as unknown as Promise<{
          response: { i: number };
        }>,
      ]);
      answers.echoes.push(echo.i);
      answers.calls.push(call.response.i);
    }
  };
  await Promise.all([turns(), requests()]);
  const { notifications } = (await client.sendRequest('_test/received', {})) as {
    notifications: { method: string; params: { i: number } }[];
  };
  const notes = notifications.filter((n) => n.method === '_test/note').map((n) => n.params.i);
  return { log, texts, answers, callsByIndex, notes };
}

/** Resets a connection through the proxy `count` times, at random moments, in random directions. */
async function resetRandomly(bench: ResumeBench, count: number, random: () => number): Promise<void> {
  for (let r = 0; r < count; r++) {
    await pause(random() * 15);
    const direction: Direction = random() < 0.5 ? 'toClient' : 'toTarget';
    const reset = bench.proxy.nextReset();
    bench.proxy.resetAfter(direction, 1 + Math.floor(random() * 600));
    await reset;
  }
}

describe('Resumable remote connections', () => {
  before(() => {
    console.log(`      resume specs: RESUME_SEED=${SEED} RESUME_RESETS=${RESETS}`);
  });

  let bench: ResumeBench | undefined;
  const startBench = useResumeBenches();

  for (const [index, transport] of TRANSPORTS.entries()) {
    for (const version of [1, 2]) {
      it(`${transport}, ACP v${version}: ${RESETS} resets during streamed turns and requests both ways lose nothing and repeat nothing`, async function () {
        this.timeout(30_000 + RESETS * 400);
        const random = seededRandom(SEED + index * 10 + version);
        bench = await startBench({ graceMs: 10_000 });
        const events = { reconnecting: 0, resumed: 0 };
        const client = await connectResuming(bench.url(transport), transport, {
          attempts: 50,
          minDelayMs: 2,
          maxDelayMs: 40,
          onReconnecting: () => void events.reconnecting++,
          onResumed: () => void events.resumed++,
        });
        const warnings: Error[] = [];
        client.on('warning', (warning) => void warnings.push(warning));
        let isDone = false;
        const workload = runWorkload(client, version, () => isDone);
        await pause(50);
        await resetRandomly(bench, RESETS, random);
        isDone = true;
        const { log, texts, answers, callsByIndex, notes } = await workload;

        console.log(
          `        ${texts.length} turns, ${answers.echoes.length} × (echo + agent→client request), ${notes.length} notifications, ` +
            `${events.reconnecting} reconnection attempts, ${events.resumed} resumes`,
        );
        expect(log.chunks.length).to.be.greaterThan(0);
        for (const [t, chunks] of log.chunks.entries()) expect(chunks, `turn ${t}`).to.deep.equal(expectedChunks(texts[t]!));
        expect(log.stops).to.deep.equal(texts.map(() => 'end_turn'));
        expect(log.strays).to.deep.equal([]);
        expect(answers.prompts.length).to.equal(texts.length);
        expect(answers.echoes).to.deep.equal(answers.echoes.map((_, i) => i));
        expect(answers.calls).to.deep.equal(answers.echoes);
        expect([...callsByIndex.values()].every((count) => count === 1)).to.equal(true);
        expect(callsByIndex.size).to.equal(answers.calls.length);
        expect(answers.errors).to.equal(Math.floor(answers.echoes.length / 10));
        expect(notes).to.deep.equal(notes.map((_, i) => i));
        expect(notes.length).to.be.at.least(answers.echoes.length);
        expect(warnings.map((w) => w.message)).to.deep.equal([]);
        expect(events.resumed).to.be.greaterThan(0);
        expectOneAgent(bench);
        await client.close();
        expect(await bench.agents[0]!.closed).to.include({ reason: 'input ended' });
      });
    }
  }
});
