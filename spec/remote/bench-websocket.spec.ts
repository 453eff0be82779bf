/**
 * The benchmark's WebSocket adapters speak the bench protocol correctly over a real WebSocket on
 * 127.0.0.1 (so a fast number is never a broken run): acp-wire, the SDK's WebSocket stream, raw `ws`.
 */
import { expect } from 'chai';
import { WEBSOCKET_ADAPTERS, type WebSocketBenchServer } from '../../bench/adapters/websocket';
import type { BenchClient } from '../../bench/adapters';
import { COUNT, ECHO, HOLD, NOTE, RELEASE, REQUEST_CANCELLED, SMALL_PARAMS, WAIT } from '../../bench/protocol';
import { runWorkload, WORKLOADS } from '../../bench/workloads';
import { expectTcpHandles, tcpHandles } from './remote-helpers';

describe('bench WebSocket adapters', () => {
  for (const [name, adapter] of Object.entries(WEBSOCKET_ADAPTERS)) {
    describe(`${name} over WebSocket`, () => {
      let baseline: number;
      let server: WebSocketBenchServer;
      let client: BenchClient;
      beforeEach(async () => {
        baseline = tcpHandles();
        server = await adapter!.listen();
        client = await adapter!.client(`ws://127.0.0.1:${server.port}/acp`);
      });
      afterEach(async () => {
        await client.close();
        await server.close();
        await expectTcpHandles(baseline);
      });

      it('echoes, counts notifications, cancels with -32800 and releases held requests', async () => {
        expect(await client.request(ECHO, SMALL_PARAMS)).to.deep.equal(SMALL_PARAMS);
        for (let i = 0; i < 25; i++) client.notify(NOTE, { n: i });
        expect(await client.request(COUNT)).to.equal(25);
        const call = client.startCancellable(WAIT, SMALL_PARAMS);
        await client.request(ECHO, SMALL_PARAMS);
        call.cancel();
        expect(await call.settled).to.equal(REQUEST_CANCELLED);
        const held = [1, 2].map(() => Promise.resolve(client.request(HOLD, SMALL_PARAMS)));
        await client.request(ECHO, SMALL_PARAMS);
        client.notify(RELEASE);
        expect(await Promise.all(held)).to.deep.equal([null, null]);
      });

      it('runs every workload without a failure', async function () {
        this.timeout(60_000);
        for (const workload of WORKLOADS) {
          const result = await runWorkload(client, workload, 5);
          expect(result.failures, workload).to.equal(0);
          expect(result.ops, workload).to.be.greaterThan(0);
        }
      });
    });
  }
});
