/**
 * A silent network while one side streams. A relay on 127.0.0.1 stops forwarding both ways without
 * closing anything, reading and dropping what arrives (a path whose buffers never fill, so each
 * side's writes keep reaching its kernel), while the agent streams `session/update`s or the client
 * streams notifications. Only what the peer sent proves it alive: each end notices within its
 * bound (WebSocket: the heartbeat's interval + timeout; Streamable HTTP: the client's `silenceMs`,
 * the server's three heartbeat intervals), then the server's grace ends the agent and frees its
 * slot, and a reconnecting client tries to resume.
 */
import { expect } from 'chai';
import {
  ConnectionClosedError,
  HeartbeatTimeoutError,
  ResumeFailedError,
  connectWebSocket,
  type Connection,
  type ReconnectOptions,
} from '../../lib';
import { rejectionOf } from '../helpers/async';
import { closeOf } from './remote-helpers';
import { FAST_HEARTBEAT, connectResuming, useResumeBenches, type ResumeBench, type ResumeTransport } from './resume-helpers';

/** Which side keeps sending while the network is silent. */
type Streamer = 'agent' | 'client';

/** The grace of the resumable servers here: short, so that the agent ends soon after the drop is noticed. */
const GRACE_MS = 300;

/** Opens a v2 session. */
async function openSession(client: Connection): Promise<string> {
  await client.sendRequest('initialize', { protocolVersion: 2 });
  return ((await client.sendRequest('session/new', { cwd: '/', mcpServers: [] })) as { sessionId: string }).sessionId;
}

/**
 * Starts `streamer` streaming; resolves, once it does, with a request that stays pending meanwhile
 * (a long sleep) and a function that stops the client's stream.
 */
async function startStreaming(client: Connection, streamer: Streamer): Promise<{ pending: PromiseLike<unknown>; stop: () => void }> {
  const sessionId = await openSession(client);
  const pending = client.sendRequest('_test/sleep', { ms: 60_000 });
  pending.catch(() => {});
  if (streamer === 'agent') {
    const streaming = new Promise<void>((resolve) => client.onNotification('session/update', () => resolve()));
    // 3,000 chunks spread over a minute: one every 20 ms for longer than any test here runs.
    const text = Array.from({ length: 3000 }, (_, k) => `w${k}`).join(' ');
    await client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text }], _meta: { workMs: 60_000 } });
    await streaming;
    return { pending, stop: () => {} };
  }
  let note = 0;
  const timer = setInterval(() => {
    if (!client.isClosed) client.sendNotification('_test/note', { note: note++ });
  }, 5);
  // The notes flow once a request sent after the first ones is answered.
  await client.sendRequest('_test/echo', {});
  return { pending, stop: () => clearInterval(timer) };
}

/** Resolves once the server has no client left (its slot is free). */
async function slotsFreed(bench: ResumeBench): Promise<void> {
  while (bench.listener.clientCount > 0) await new Promise((resolve) => bench.listener.pool.once('closed', resolve));
}

describe('A silent network while one side streams (relay that drops without closing)', () => {
  const startBench = useResumeBenches();

  for (const streamer of ['agent', 'client'] as const) {
    it(`websocket: while the ${streamer} streams, both heartbeats end the connection with a HeartbeatTimeoutError and the slot is freed`, async () => {
      const bench = await startBench(false);
      const client = await connectWebSocket(bench.url('websocket'), { heartbeat: FAST_HEARTBEAT });
      const clientClosed = closeOf(client);
      const { pending, stop } = await startStreaming(client, streamer);
      try {
        bench.proxy.swallow();
        const [agentClosed, clientEnd] = await Promise.all([bench.agents[0]!.closed, clientClosed]);
        expect(agentClosed.reason).to.equal('input error');
        expect(agentClosed.error).to.be.instanceOf(HeartbeatTimeoutError);
        expect(clientEnd.reason).to.equal('input error');
        expect(clientEnd.error).to.be.instanceOf(HeartbeatTimeoutError);
        const error = await rejectionOf<ConnectionClosedError>(pending);
        expect(error).to.be.instanceOf(ConnectionClosedError);
        expect(error.cause).to.be.instanceOf(HeartbeatTimeoutError);
        await slotsFreed(bench);
      } finally {
        stop();
        await client.close();
      }
    });
  }

  /**
   * Per transport: the client's reconnect options, what it sees as the cause of the drop, and the
   * reason its agent's connection ends with at the end of the grace (WebSocket: its stream ends;
   * Streamable HTTP: the server closes it as an abandoned one).
   */
  const resumables: readonly {
    transport: ResumeTransport;
    reconnect: ReconnectOptions;
    isDropCause: (error: Error) => boolean;
    agentReason: string;
  }[] = [
    { transport: 'websocket', reconnect: {}, isDropCause: (error) => error instanceof HeartbeatTimeoutError, agentReason: 'input ended' },
    { transport: 'http', reconnect: { silenceMs: 300, heartbeatMs: 100 }, isDropCause: () => true, agentReason: 'closed locally' },
  ];
  for (const { transport, reconnect, isDropCause, agentReason } of resumables) {
    for (const streamer of ['agent', 'client'] as const) {
      it(`${transport} with resumption: while the ${streamer} streams, the client reconnects and the grace ends the agent and frees its slot`, async () => {
        const bench = await startBench({ graceMs: GRACE_MS });
        const drops: Error[] = [];
        let onReconnecting!: () => void;
        const reconnecting = new Promise<void>((resolve) => (onReconnecting = resolve));
        const client = await connectResuming(bench.url(transport), transport, {
          ...reconnect,
          attempts: 1000,
          minDelayMs: 20,
          maxDelayMs: 50,
          onReconnecting: ({ error }) => {
            drops.push(error);
            onReconnecting();
          },
        });
        const { pending, stop } = await startStreaming(client, streamer);
        try {
          bench.proxy.swallow();
          await reconnecting;
          expect(isDropCause(drops[0]!), `the first drop's cause: ${String(drops[0])}`).to.equal(true);
          expect((await bench.agents[0]!.closed).reason).to.equal(agentReason);
          await slotsFreed(bench);
          // Back on the network, the client is told its connection is gone.
          bench.proxy.heal();
          const error = await rejectionOf<ConnectionClosedError>(pending);
          expect(error).to.be.instanceOf(ConnectionClosedError);
          expect(error.cause).to.be.instanceOf(ResumeFailedError).and.include({ reason: 'refused' });
        } finally {
          stop();
          await client.close();
        }
      });
    }
  }
});
