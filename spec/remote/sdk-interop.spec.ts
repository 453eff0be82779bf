/**
 * Interop with the official ACP SDK over the network, both ways: the SDK's clients drive an
 * acp-wire server hosting the conformance agent, and acp-wire's clients drive the SDK's
 * `AcpServer` hosting an SDK agent. Every ACP message is checked exactly and against the schema.
 */
import * as acp from '@agentclientprotocol/sdk/experimental/v2';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { expect } from 'chai';
import WebSocket from 'ws';
import { serveConformanceAgent } from '../../examples/conformance-agent';
import {
  RpcError,
  connectHttp,
  connectWebSocket,
  listenRemote,
  type Connection,
  type RemoteListener,
  type RemoteTransport,
} from '../../lib';
import { rejectionOf } from '../helpers/async';
import { LineRecorder } from '../helpers/acp-lines';
import { acpErrors, agentLineErrors } from '../helpers/acp-schema';
import { SDK_CLIENT_INFO, sdkCancelBeforeInsertion, sdkFirstTurn } from '../helpers/sdk-client';
import { expectTcpHandles, tcpHandles } from './remote-helpers';
import { SDK_AGENT_INFO, startSdkServer, type SdkServer } from './sdk-peers';

/** The SDK client stream of a transport. */
type SdkStreamFactory = (listener: RemoteListener) => acp.Stream;

const SDK_CLIENTS: Record<string, SdkStreamFactory> = {
  websocket: (listener) => createWebSocketStream(listener.url, { WebSocket: WebSocket as never }) as acp.Stream,
  http: (listener) => createHttpStream(listener.httpUrl) as acp.Stream,
};

/** The acp-wire client of a transport, connected to a server on `port`. */
const WIRE_CLIENTS: Record<string, (port: number, tap: LineRecorder) => Promise<Connection>> = {
  websocket: (port, tap) => connectWebSocket(`ws://127.0.0.1:${port}/acp`, { logger: tap }),
  http: (port, tap) => Promise.resolve(connectHttp(`http://127.0.0.1:${port}/acp`, { logger: tap })),
};

for (const transport of ['websocket', 'http'] as RemoteTransport[]) {
  describe(`official SDK interop over ${transport}`, () => {
    let baseline: number;
    beforeEach(() => {
      baseline = tcpHandles();
    });
    afterEach(async () => {
      await expectTcpHandles(baseline);
    });

    describe('the SDK client drives an acp-wire server hosting the conformance agent', () => {
      let listener: RemoteListener;
      let tap: LineRecorder;
      beforeEach(async () => {
        tap = new LineRecorder();
        listener = await listenRemote({ transports: [transport], logger: tap }, (connection) => serveConformanceAgent(connection));
      });
      afterEach(async () => {
        await listener.close();
      });

      const withSdkClient = <T>(op: (ctx: acp.ClientContext) => Promise<T>): Promise<T> =>
        acp.client({ name: SDK_CLIENT_INFO.name }).connectWith(SDK_CLIENTS[transport]!(listener), op);

      it('initializes, prompts and streams the updates, every agent message valid ACP v2', async () => {
        const outcome = await withSdkClient((ctx) => sdkFirstTurn(ctx, 'hello over the network'));
        expect(outcome.init).to.deep.include({ protocolVersion: 2, capabilities: { session: {} } });
        expect(outcome.init.info.name).to.equal('acp-wire-conformance-agent');
        expect(outcome.text).to.equal('echo: hello over the network');
        const sent = tap.sent.map(
          (line) => JSON.parse(line) as { method?: string; params?: { update?: { sessionUpdate: string; state?: string } } },
        );
        const updates = sent
          .filter((m) => m.method === 'session/update')
          .map((m) => `${m.params!.update!.sessionUpdate} ${m.params!.update!.state ?? ''}`.trim());
        const kinds = updates.filter((kind, i) => kind !== updates[i - 1]);
        expect(kinds).to.deep.equal(['user_message', 'state_update running', 'agent_message_chunk', 'state_update idle']);
        const { checked, errors } = tap.schemaErrors('agent', 2);
        expect(errors).to.deep.equal([]);
        expect(checked.length).to.equal(updates.length + 3);
      });

      it('answers a $/cancel_request from the SDK with exactly -32800', async () => {
        const error = await withSdkClient(sdkCancelBeforeInsertion);
        expect(error).to.be.instanceOf(acp.RequestError).and.include({ code: -32800 });
        const cancel = tap.received.find((line) => line.includes('$/cancel_request'))!;
        const { requestId } = (JSON.parse(cancel) as { params: { requestId: unknown } }).params;
        expect(tap.sent).to.include(
          `{"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"error":{"code":-32800,"message":"Request cancelled"}}`,
        );
        expect(tap.schemaErrors('agent', 2).errors).to.deep.equal([]);
      });
    });

    describe("acp-wire's client drives the SDK's AcpServer hosting an SDK agent", () => {
      let sdk: SdkServer;
      let tap: LineRecorder;
      let client: Connection;
      beforeEach(async () => {
        sdk = await startSdkServer();
        tap = new LineRecorder();
        client = await WIRE_CLIENTS[transport]!(sdk.port, tap);
      });
      afterEach(async () => {
        await client.close();
        await sdk.close();
      });

      it('initializes, prompts and receives the updates exactly, every message valid ACP v2', async () => {
        const updates: unknown[] = [];
        client.onNotification('session/update', (params) => void updates.push(params));
        const init = await client.sendRequest('initialize', { protocolVersion: 2, info: { name: 'acp-wire', version: '1.0.0' } });
        expect(init).to.deep.equal({ protocolVersion: 2, info: SDK_AGENT_INFO, capabilities: { session: {} } });
        const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/tmp', mcpServers: [] });
        expect(sessionId).to.equal('sdk-session-1');
        const prompt = [{ type: 'text', text: 'hi SDK' }];
        expect(await client.sendRequest('session/prompt', { sessionId, prompt })).to.deep.equal({ messageId: 'sdk-message-1' });
        expect(updates).to.deep.equal([
          { sessionId, update: { sessionUpdate: 'user_message', messageId: 'sdk-message-1', content: prompt } },
          {
            sessionId,
            update: {
              sessionUpdate: 'agent_message_chunk',
              messageId: 'sdk-message-1-reply',
              content: { type: 'text', text: 'sdk echo: hi SDK' },
            },
          },
        ]);
        for (const line of tap.sent) expect(acpErrors('', JSON.parse(line)), line).to.deep.equal([]);
        const received = tap.received.map((line) => JSON.parse(line) as { id?: number; method?: string });
        const methods = ['initialize', 'session/new', 'session/prompt'];
        for (const [i, line] of tap.received.entries()) {
          const method = received[i]!.method ?? methods[received[i]!.id! - 1]!;
          expect(agentLineErrors(line, method), line).to.deep.equal([]);
        }
      });

      it('cancels a request with $/cancel_request and gets -32800 from the SDK agent', async () => {
        await client.sendRequest('initialize', { protocolVersion: 2, info: { name: 'acp-wire', version: '1.0.0' } });
        const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/tmp', mcpServers: [] });
        const prompt = client.sendRequest('session/prompt', {
          sessionId,
          prompt: [{ type: 'text', text: 'held' }],
          _meta: { holdMs: 60_000 },
        });
        prompt.cancel();
        const error = await rejectionOf(prompt);
        expect(error).to.be.instanceOf(RpcError).and.include({ code: -32800 });
        expect(tap.sent.filter((line) => line.includes('$/cancel_request'))).to.deep.equal([
          '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}',
        ]);
      });
    });
  });
}
